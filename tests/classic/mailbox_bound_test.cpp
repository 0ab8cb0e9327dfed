#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include <tact/tact.hpp>

#include "support/test_support.hpp"

// Bounded mailboxes (docs/flow_control.md), from the user's side: a
// behaviour that floods a bounded actor waits for room, so the actor never
// has more than its bound queued; nothing is lost, reordered or run twice;
// a thread outside the actor world is told no (try_send) or waits
// (send_within); a drop policy drops, counts and reports; nothing waits
// for itself.
namespace {

using namespace std::chrono_literals;

struct item : tact::message {
  item(std::uint64_t n) : tact::message{tact::allocation::Delete}, seq{n} {}
  std::uint64_t seq;
};
struct start : tact::message {};

// Counts what it received, checks the order, and notes the largest
// backlog it saw: what its producer had sent (counted before each send)
// minus what it had received.
struct sink : tact::actor {
  sink(tact::actor_system& system, const std::atomic<std::uint64_t>& produced)
      : actor{system}, produced_{produced} {}

  tact::allocation receive(item& m) {
    if (m.seq != received) ++out_of_order;
    ++received;
    const std::uint64_t backlog = produced_.load(std::memory_order_relaxed) - received + 1;
    largest_backlog = std::max(largest_backlog, backlog);
    return Nodelete;
  }

  const std::atomic<std::uint64_t>& produced_;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t largest_backlog = 0;
};

// Sends `count` items to its sink in one behaviour.
struct producer : tact::actor {
  producer(tact::actor_system& system, sink& to, std::uint64_t count,
           std::atomic<std::uint64_t>& produced)
      : actor{system}, to_{to}, count_{count}, produced_{produced} {}

  tact::allocation receive(start&) {
    for (std::uint64_t i = 0; i < count_; ++i) {
      produced_.fetch_add(1, std::memory_order_relaxed);
      tact::send_new<item>(to_, i);
    }
    return Nodelete;
  }

  sink& to_;
  const std::uint64_t count_;
  std::atomic<std::uint64_t>& produced_;
};

struct flood_outcome {
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t largest_backlog = 0;
  tact::worker_stats stats;
};

flood_outcome flood(std::uint32_t workers, std::uint32_t bound, std::uint64_t count) {
  tact::actor_system system{{.workers = workers}};
  std::atomic<std::uint64_t> produced{0};
  sink s{system, produced};
  if (bound != 0) s.bound_mailbox(bound);
  producer p{system, s, count, produced};
  start go;
  p | go;
  system.await_quiescence();
  flood_outcome out{s.received, s.out_of_order, s.largest_backlog, system.stats().total};
  s | tact::finished_msg;
  p | tact::finished_msg;
  system.stop();
  return out;
}

}  // namespace

TEST_CASE("a behaviour flooding a bounded actor waits, so its backlog stays within the bound",
          "[mailbox_bound]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint32_t bound = GENERATE(1u, 7u, 256u);
  constexpr std::uint64_t count = 20'000;
  INFO(workers << " workers, bound " << bound);
  const flood_outcome out = flood(workers, bound, count);
  CHECK(out.received == count);
  CHECK(out.out_of_order == 0);
  // The sink's backlog counts the item it is receiving, which has left the
  // mailbox, and the producer counts an item before it sends it (or waits
  // to): two more than the mailbox ever held.
  CHECK(out.largest_backlog <= bound + 2);
  CHECK(out.stats.sends_over_bound == 0);
  CHECK(out.stats.sends_dropped == 0);
  if (workers == 1) CHECK(out.stats.sends_waited > 0);
  CHECK(out.stats.messages_sent == out.stats.messages_processed);
}

TEST_CASE("without a bound the same flood queues everything at one worker", "[mailbox_bound]") {
  // The control: the test above would pass vacuously if the sink kept up.
  const flood_outcome out = flood(1, 0, 20'000);
  CHECK(out.received == 20'000);
  CHECK(out.largest_backlog == 20'000);
  CHECK(out.stats.sends_waited == 0);
}

TEST_CASE("the system's default bound holds for every classic actor", "[mailbox_bound]") {
  tact::actor_system system{{.workers = 1, .mailbox_bound = 16}};
  std::atomic<std::uint64_t> produced{0};
  sink s{system, produced};
  producer p{system, s, 5'000, produced};
  start go;
  p | go;
  system.await_quiescence();
  CHECK(s.received == 5'000);
  CHECK(s.out_of_order == 0);
  CHECK(s.largest_backlog <= 16 + 2);
  CHECK(system.stats().total.sends_waited > 0);
  s | tact::finished_msg;
  p | tact::finished_msg;
  system.stop();
}

namespace {

// Sends itself `count` items in one behaviour, with a bound far smaller:
// waiting for itself would never end.
struct self_flooder : tact::actor {
  self_flooder(tact::actor_system& system, std::uint64_t count) : actor{system}, count_{count} {
    bound_mailbox(4);
  }
  tact::allocation receive(start&) {
    for (std::uint64_t i = 0; i < count_; ++i) tact::send_new<item>(*this, i);
    return Nodelete;
  }
  tact::allocation receive(item& m) {
    if (m.seq != received) ++out_of_order;
    ++received;
    return Nodelete;
  }
  const std::uint64_t count_;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

}  // namespace

TEST_CASE("an actor sending to itself past its bound does not wait for itself",
          "[mailbox_bound]") {
  tact::actor_system system{{.workers = GENERATE(1u, 2u)}};
  self_flooder a{system, 1'000};
  start go;
  a | go;
  system.await_quiescence();
  CHECK(a.received == 1'000);
  CHECK(a.out_of_order == 0);
  CHECK(system.stats().total.sends_over_bound > 0);
  CHECK(system.stats().total.sends_waited == 0);
  a | tact::finished_msg;
  system.stop();
}

namespace {

struct counted : tact::actor {
  using actor::actor;
  tact::allocation receive(item& m) {
    if (m.seq != received) ++out_of_order;
    ++received;
    return Nodelete;
  }
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

}  // namespace

TEST_CASE("a thread is told no by try_send, and goes over the bound with a plain send",
          "[mailbox_bound]") {
  tact::actor_system system{{.workers = 1}};
  // A sponsor run by hand: nothing drains the mailbox until we run it.
  tact::sponsor by_hand{system};
  counted& a = by_hand.spawn<counted>();
  a.bound_mailbox(4);
  std::uint64_t next = 0;
  for (int i = 0; i < 4; ++i) CHECK(tact::try_send(a, *new item{next++}));
  item* refused = new item{next};
  CHECK_FALSE(tact::try_send(a, *refused));
  CHECK_FALSE(tact::send_within(a, *refused, 1ms));
  // A plain send from a thread never waits: it goes over, and is counted.
  tact::send(a, *refused);
  ++next;
  CHECK(system.stats().total.sends_over_bound == 1);
  CHECK(by_hand.run_pending() == 5);
  CHECK(tact::try_send(a, *new item{next++}));
  by_hand.run_pending();
  CHECK(a.received == next);
  CHECK(a.out_of_order == 0);
  a | tact::delete_msg;  // spawned: the system deletes it
  by_hand.run_pending();
}

TEST_CASE("send_within waits for the receiver to make room", "[mailbox_bound]") {
  tact::actor_system system{{.workers = 1}};
  tact::sponsor by_hand{system};
  counted& a = by_hand.spawn<counted>();
  a.bound_mailbox(8);
  for (std::uint64_t i = 0; i < 8; ++i) tact::send_new<item>(a, i);
  std::atomic<bool> sent{false};
  std::thread sender{[&] {
    sent = tact::send_within(a, *new item{8}, 1h);
  }};
  // The sponsor's run makes room; the waiting thread is woken by it.
  while (!sent.load()) {
    by_hand.run_pending();
    std::this_thread::yield();
  }
  sender.join();
  by_hand.run_pending();
  CHECK(a.received == 9);
  CHECK(a.out_of_order == 0);
  a | tact::delete_msg;  // spawned: the system deletes it
  by_hand.run_pending();
}

namespace {

struct dropping : tact::actor {
  using actor::actor;
  tact::allocation receive(item&) {
    ++received;
    return Nodelete;
  }
  std::uint64_t received = 0;
};

}  // namespace

TEST_CASE("a drop policy drops what does not fit, counts it and reports it", "[mailbox_bound]") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  tact::sponsor by_hand{system};
  dropping& a = by_hand.spawn<dropping>();
  a.bound_mailbox(4, tact::overflow::drop);
  for (std::uint64_t i = 0; i < 10; ++i) tact::send_new<item>(a, i);
  by_hand.run_pending();
  CHECK(a.received == 4);
  const tact::worker_stats s = system.stats().total;
  CHECK(s.sends_dropped == 6);
  CHECK(s.messages_rejected == 6);
  CHECK(s.sends_waited == 0);
  // The 1st, 2nd and 4th drop are reported, not every one.
  CHECK(log.count(tact::diagnostic_kind::mailbox_full) == 3);
  a | tact::delete_msg;  // spawned: the system deletes it
  by_hand.run_pending();
}

TEST_CASE("a mailbox is bounded before anything is sent to it", "[mailbox_bound]") {
  tact::actor_system system{{.workers = 1}};
  tact::sponsor by_hand{system};
  counted& a = by_hand.spawn<counted>();
  a.bound_mailbox(4);
  tact::send_new<item>(a, 0);
  CHECK_THROWS_AS(a.bound_mailbox(8), std::logic_error);
  by_hand.run_pending();
  a | tact::delete_msg;  // spawned: the system deletes it
  by_hand.run_pending();
}
