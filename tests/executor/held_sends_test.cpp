#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <tact/tact.hpp>

#include "executor/executor.hpp"
#include "executor/outbox.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

// A worker holds its batch's sends to other queues back until the batch
// ends (docs/design.md, "Outboxes"), but while a worker is idle the first
// send to each queue goes at once: a send that an idle worker could run
// must reach it, however long the sender's behaviour goes on. The later
// sends to that queue follow in groups.
namespace {

using namespace std::chrono_literals;

constexpr auto patient = 60s;  // a failure if reached, never a wait that passes

struct nudge : tact::message {};
struct start : tact::message {};

// A question its asker waits for: answered once the test opens the gate,
// which it does once the asker's behaviour is suspended, so that the rest
// of that behaviour runs resumed, outside any batch.
struct ready : tact::request<bool> {};
struct gate {
  std::atomic<bool> open{false};
  void answer(ready& q) const {
    tact::test::eventually([&] { return open.load(std::memory_order_acquire); });
    q.reply(true);
  }
  // Opens it in any case: a failure must not leave the answerer waiting.
  void open_once_asked(tact::actor_system& system) {
    CHECK(tact::test::eventually([&] { return system.stats().load[0].suspended == 1; }));
    open.store(true, std::memory_order_release);
  }
};

struct receiver : tact::actor {
  gate* g = nullptr;
  std::atomic<bool> nudged{false};
  tact::allocation receive(nudge&) {
    nudged.store(true, std::memory_order_release);
    return Nodelete;
  }
  tact::allocation receive(ready& q) {
    g->answer(q);
    return Nodelete;
  }
};

// Sends, then goes on until the send has been received: it could not
// finish if the send waited for the end of its batch.
//
// With `system`, it asks the receiver first, and sends once the
// receiver's worker has gone idle after answering (while every worker is
// busy, its sends wait for the behaviour's end, as a batch's do).
struct sender : tact::actor {
  receiver* to = nullptr;
  tact::actor_system* system = nullptr;
  nudge n;
  std::atomic<bool> seen{false};
  tact::ask_result<bool> answer{tact::ask_error::no_reply};
  tact::allocation receive(start&) {
    if (system != nullptr) {
      answer = tact::ask(*to, ready{}, patient);
      tact::test::eventually([this] { return system->stats().load[1].parked; });
    }
    *to | n;
    const auto give_up = std::chrono::steady_clock::now() + patient;
    while (!to->nudged.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    seen.store(to->nudged.load(std::memory_order_acquire), std::memory_order_release);
    return Nodelete;
  }
};

struct flood : tact::message {};

struct tally : tact::actor {
  gate* g = nullptr;
  std::uint64_t received = 0;
  tact::allocation receive(flood&) {
    ++received;
    return Nodelete;
  }
  tact::allocation receive(ready& q) {
    g->answer(q);
    return Nodelete;
  }
};

// Sends `n` messages to the tally in one behaviour; with `ask_first`, asks
// the tally first, so that a resumed behaviour sends the flood.
struct flooder : tact::actor {
  flooder(tally& to, std::uint64_t n) : to_{to}, n_{n} { f_.allow_unsent(); }
  bool ask_first = false;
  tact::ask_result<bool> answer{tact::ask_error::no_reply};
  tact::allocation receive(start&) {
    if (ask_first) answer = tact::ask(to_, ready{}, patient);
    for (std::uint64_t i = 0; i < n_; ++i) to_ | f_;
    return Nodelete;
  }

 private:
  tally& to_;
  std::uint64_t n_;
  flood f_;
};

// Runs on the second worker until the test lets it end, the first thing
// that worker does after it parked; says whether that worker counted as
// idle meanwhile.
struct long_runner : tact::actor {
  tact::actor_system* system = nullptr;
  std::atomic<bool> running{false};
  std::atomic<bool> release{false};
  bool seen_idle = true;
  tact::allocation receive(start&) {
    running.store(true, std::memory_order_release);
    tact::test::eventually([this] { return release.load(std::memory_order_acquire); });
    seen_idle = tact::detail::executor_of(*system).worker_at(1).idle();
    return Nodelete;
  }
};

// Sends to a queue of the second worker while that worker runs the long
// runner, and notes how many envelopes its queues held right after.
struct busy_sender : tact::actor {
  long_runner* busy = nullptr;
  receiver* to = nullptr;
  nudge n;
  std::uint64_t queued_after_send = 0;
  tact::allocation receive(start&) {
    tact::test::eventually([this] { return busy->running.load(std::memory_order_acquire); });
    *to | n;
    queued_after_send = busy->system->stats().load[1].queued;
    busy->release.store(true, std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a worker woken into a long behaviour is busy, and sends to it are held") {
  // Before, a worker woken from a park kept its idle mark until the
  // sweep that found the work returned, so through the whole batch: the
  // others then posted their sends to its queues at once, each under the
  // queue's lock, for a worker that could not run them.
  tact::actor_system system{tact::test::configured(
      {.workers = 2, .queues = 2, .steal = tact::steal_policy::none, .adapt_every = {}})};
  long_runner& busy = system.spawn_at<long_runner>(tact::on_worker(1));
  receiver& r = system.spawn_at<receiver>(tact::on_worker(1));
  busy_sender& s = system.spawn_at<busy_sender>(tact::on_worker(0));
  busy.system = &system;
  s.busy = &busy;
  s.to = &r;
  REQUIRE(tact::test::eventually([&] { return system.stats().load[1].parked; }));
  start go_busy;
  start go_send;
  busy | go_busy;
  s | go_send;
  system.await_quiescence();
  CHECK_FALSE(busy.seen_idle);
  // Held to the end of the sender's batch, not posted at once.
  CHECK(s.queued_after_send == 0);
  CHECK(r.nudged.load());
  CHECK(tact::test::conservation_of(system));
  busy | tact::delete_msg;
  r | tact::delete_msg;
  s | tact::delete_msg;
  system.stop();
}

TEST_CASE("a send reaches an idle worker while its sender's behaviour still runs") {
  // No stealing: the receiver's queue stays with the second worker, which
  // has nothing else to do, and the first worker does not claim it.
  tact::actor_system system{tact::test::configured(
      {.workers = 2, .queues = 2, .steal = tact::steal_policy::none, .adapt_every = {}})};
  receiver& r = system.spawn_at<receiver>(tact::on_worker(1));
  sender& s = system.spawn_at<sender>(tact::on_worker(0));
  gate g;
  r.g = &g;
  s.to = &r;
  // Resumed after a wait, a behaviour holds its sends back as a batch
  // does, with its first send to each queue going at once as in a new
  // batch: the question went to the receiver's queue before.
  const bool ask_first = GENERATE(false, true);
  CAPTURE(ask_first);
  if (ask_first) s.system = &system;
  // The second worker has found nothing to do.
  REQUIRE(tact::test::eventually([&] { return system.stats().load[1].parked; }));
  start go;
  s | go;
  if (ask_first) g.open_once_asked(system);
  system.await_quiescence();
  CHECK(s.seen.load());
  CHECK((!ask_first || s.answer.has_value()));
  CHECK(tact::test::conservation_of(system));
  r | tact::delete_msg;
  s | tact::delete_msg;
  system.stop();
}

TEST_CASE("a flood to an idle worker's queue reaches it in groups") {
  // The tally keeps up with the flood, so its worker is idle at almost
  // every send. The first goes at once; the rest are posted in groups of
  // at most an outbox's worth, each under one lock section, which a gulp
  // takes whole: the tally's worker cannot gulp more often than the
  // flood was posted (with no gulp budget, which would cut a batch and
  // gulp its rest again). Posted one at a time, it gulped every few
  // messages.
  constexpr std::uint64_t n = 20'000;
  constexpr std::uint64_t outbox_most = tact::detail::outbox::one_queue_most;
  tact::actor_system system{tact::test::configured(
      {.workers = 2,
       .queues = 2,
       .gulp_budget = {},
       .steal = tact::steal_policy::none,
       .adapt_every = {}})};
  tally& t = system.spawn_at<tally>(tact::on_worker(1));
  flooder& f = system.spawn_at<flooder>(tact::on_worker(0), t, n);
  gate g;
  t.g = &g;
  // Sent by a behaviour resumed after a wait, the flood goes in groups
  // too. It went one send per lock section before, and the tally's
  // worker gulped 11,000 to 16,000 times in most runs.
  f.ask_first = GENERATE(false, true);
  CAPTURE(f.ask_first);
  REQUIRE(tact::test::eventually([&] { return system.stats().load[1].parked; }));
  const std::uint64_t gulps_before = system.stats().workers[1].gulps;
  start go;
  f | go;
  if (f.ask_first) g.open_once_asked(system);
  system.await_quiescence();
  CHECK(t.received == n);
  const std::uint64_t gulps = system.stats().workers[1].gulps - gulps_before;
  CAPTURE(gulps);
  // The question, when asked, takes a gulp of its own.
  const std::uint64_t asked = f.ask_first ? 1 : 0;
  CHECK(gulps <= 2 + asked + (n - 1 + outbox_most - 1) / outbox_most);
  CHECK((!f.ask_first || f.answer.has_value()));
  CHECK(tact::test::conservation_of(system));
  t | tact::delete_msg;
  f | tact::delete_msg;
  system.stop();
}
