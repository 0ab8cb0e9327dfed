#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// The gulp budget: a worker runs one gulp of a queue for at most
// system_config::gulp_budget (give or take a message) before the worker's
// other queues get their turn, so a flood into one queue delays a message
// in another queue of the same worker by about that long, not by the
// whole flood.
using namespace std::chrono_literals;

namespace {

struct flood_msg : tact::message {};
struct probe_msg : tact::message {};
struct hold_msg : tact::message {};

// Each flood message takes at least `each` of wall time.
struct flooded : tact::actor {
  explicit flooded(std::chrono::nanoseconds each) : each_{each} {}
  std::atomic<std::uint64_t> received{0};
  tact::allocation receive(flood_msg&) {
    const auto until = std::chrono::steady_clock::now() + each_;
    while (std::chrono::steady_clock::now() < until) {
    }
    received.fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }
  std::chrono::nanoseconds each_;
};

// Records how much of the flood had run when the probe ran.
struct probe : tact::actor {
  explicit probe(const flooded& f) : flood_{f} {}
  std::atomic<std::uint64_t> flood_before{~std::uint64_t{0}};
  tact::allocation receive(probe_msg&) {
    flood_before.store(flood_.received.load(std::memory_order_relaxed));
    return Nodelete;
  }
  const flooded& flood_;
};

// Holds the worker until the test has queued the flood, so that the
// flood sits in one mailbox and one gulp takes all of it.
struct holder : tact::actor {
  std::promise<void> holding;
  std::shared_future<void> release;
  tact::allocation receive(hold_msg&) {
    holding.set_value();
    release.wait();
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a flood into one queue delays another queue of its worker by the gulp budget") {
  const auto budget = GENERATE(0us, 100us, 1000us);
  constexpr auto each = 2us;
  constexpr std::uint64_t flood = 20'000;  // 40 ms at least
  CAPTURE(budget.count());
  // One worker, two queues: the flood on queue 0, the probe on queue 1,
  // which a sweep reaches after queue 0.
  tact::actor_system system{{.workers = 1, .queues = 2, .gulp_budget = budget}};
  auto& sink = system.spawn_at<flooded>(tact::on_queue(0), each);
  auto& p = system.spawn_at<probe>(tact::on_queue(1), sink);
  auto& h = system.spawn_at<holder>(tact::on_queue(1));
  std::promise<void> release;
  h.release = release.get_future().share();
  std::future<void> holding = h.holding.get_future();
  hold_msg hold;
  h | hold;
  holding.wait();  // the worker is inside queue 1's batch

  std::vector<flood_msg> messages(flood);
  for (flood_msg& m : messages) sink | m;
  probe_msg ping;
  p | ping;  // queue 1's mailbox: the next gulp of queue 1
  release.set_value();
  system.await_quiescence();

  CHECK(sink.received.load() == flood);
  // The first sweep after the hold gulps queue 0 (the whole flood) and
  // runs it for the budget before queue 1's turn. Each message takes at
  // least `each`, and the clock is read at least once per
  // gulp_clock_every messages: however the thread is scheduled, no more
  // than this can run first (a preempted thread runs fewer).
  const std::uint64_t before = p.flood_before.load();
  const std::uint64_t most =
      static_cast<std::uint64_t>(budget / each) + 1 + tact::defaults::gulp_clock_every;
  CAPTURE(before, most);
  if (budget == 0us) {
    CHECK(before == flood);
  } else {
    CHECK(before >= 1);
    CHECK(before <= most);
  }
  const tact::system_stats stats = system.stats();
  CHECK((stats.total.batches_given_back > 0) == (budget != 0us));
  CHECK(stats.total.gulped_messages == flood + 2);  // each message taken from a mailbox once
  CHECK(tact::test::conservation_of(system));
  sink | tact::delete_msg;
  p | tact::delete_msg;
  h | tact::delete_msg;
  system.stop();
}

namespace {

struct stream : tact::test::sequenced {
  stream(std::uint64_t sender, std::uint64_t seq) : sequenced{sender, seq} {
    set_allocation(tact::allocation::Delete);
  }
};
struct receiver : tact::actor {
  tact::test::fifo_check fifo;
  tact::allocation receive(stream& m) {
    fifo.accept(m);
    return Nodelete;
  }
};
struct go_msg : tact::message {};
struct tick : tact::message {
  tick() { set_allocation(tact::allocation::Delete); }
};
// Sends its stream to the receiver a message at a time, one per tick it
// gets from itself: its sends to the receiver are made in many behaviours
// of one batch, the first ones appended to the batch and later ones
// through the mailbox once the batch's append budget is spent.
struct sender : tact::actor {
  sender(std::uint64_t id, receiver& to, std::uint64_t n) : id_{id}, to_{to}, n_{n} {}
  tact::allocation receive(go_msg&) {
    for (std::uint64_t i = 0; i < n_; ++i) *this | *new tick;
    return Nodelete;
  }
  tact::allocation receive(tick&) {
    to_ | *new stream{id_, sent_++};
    return Nodelete;
  }
  std::uint64_t id_;
  receiver& to_;
  std::uint64_t n_;
  std::uint64_t sent_ = 0;
};

}  // namespace

// Sends to an actor on the queue in hand join its batch (local_batch per
// gulp), later ones take the mailbox; a batch cut at the budget and taken
// up again must not let a sender's later appends overtake its earlier
// sends waiting in the mailbox.
TEST_CASE("a batch cut at the gulp budget keeps each sender's order, local appends included") {
  // 1 ns: every batch of three messages or more is cut after its second.
  const std::chrono::nanoseconds budget = GENERATE(1ns, 2000ns);
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);  // 8 on 2 cores: cut batches stolen
  CAPTURE(budget.count(), workers);
  constexpr std::uint32_t senders = 64;
  const std::uint64_t per_sender = tact::test::scaled(2'000);

  tact::actor_system system{
      tact::test::configured({.workers = workers, .local_batch = 4, .gulp_budget = budget})};
  auto& r = system.spawn<receiver>();
  std::vector<sender*> all;
  // Half share the receiver's queue, so their sends to it are appended to
  // the batch in hand; the others' come through its mailbox.
  for (std::uint64_t s = 0; s < senders; ++s)
    all.push_back(s % 2 == 0 ? &system.spawn_at<sender>(tact::next_to(r), s, r, per_sender)
                             : &system.spawn<sender>(s, r, per_sender));
  std::vector<go_msg> starts(senders);
  for (std::uint64_t s = 0; s < senders; ++s) *all[s] | starts[s];
  system.await_quiescence();
  CHECK(r.fifo.received() == senders * per_sender);
  CHECK(r.fifo.clean());
  CHECK(tact::test::conservation_of(system));
  for (sender* s : all) *s | tact::delete_msg;
  r | tact::delete_msg;
  system.stop();
}
