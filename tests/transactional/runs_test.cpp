#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <tact/testing.hpp>
#include <tact/transactional.hpp>

#include "executor/executor.hpp"
#include "executor/stepper.hpp"
#include "support/invariants.hpp"
#include "support/queue_capacity.hpp"
#include "support/test_support.hpp"

// A commit's consecutive sends to one serialized actor go to its queue as
// runs, one envelope per run (docs/transactional.md, "Execution"). From
// the user's side nothing changes: each message arrives once, in commit
// order, is counted as one message, and one left queued at stop() is
// reported as one; what changes is the memory a burst takes in the queue.
namespace {

namespace tx = tact::tx;
using tact::test::queue_capacity;

struct start {};
struct item {
  std::uint32_t from;
  std::uint32_t seq;
};

// What the sink saw. Serialized: one handler at a time, so the plain
// fields are written by one thread at a time.
struct observed {
  explicit observed(std::uint32_t producers) : next(producers, 0) {}
  std::vector<std::uint32_t> next;  // per producer, the seq expected next
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

tx::behaviour sink(observed& o) {
  return {[&o](item m) {
    if (m.seq != o.next[m.from]) ++o.out_of_order;
    o.next[m.from] = m.seq + 1;
    ++o.received;
  }};
}

// Stages `count` items in one handler: one run after another to the sink.
tx::behaviour producer(const tx::actor_ref& to, std::uint32_t from, std::uint32_t count) {
  return {[to, from, count](start) {
    for (std::uint32_t i = 0; i < count; ++i) tx::send(to, item{from, i});
  }};
}

}  // namespace

// One worker: the sink's home is the queue the producer runs on, so the
// runs join the batch in hand; eight on two cores: they cross to queues
// that other workers are draining meanwhile.
TEST_CASE("a commit's burst to a serialized actor arrives once each, in order, counted per message",
          "[transactional][runs]") {
  const std::uint32_t workers = GENERATE(1u, 8u);
  constexpr std::uint32_t producers = 4;
  const auto count = static_cast<std::uint32_t>(tact::test::scaled(3'000));
  INFO(workers << " workers, " << producers << " producers of " << count);
  tact::actor_system system{{.workers = workers}};
  observed o{producers};
  const tx::actor_ref to = tx::spawn(system, sink(o), tx::mode::serialized);
  for (std::uint32_t p = 0; p < producers; ++p)
    tx::send(tx::spawn(system, producer(to, p, count)), start{});
  system.await_quiescence();
  CHECK(o.received == std::uint64_t{producers} * count);
  CHECK(o.out_of_order == 0);
  for (std::uint32_t p = 0; p < producers; ++p) CHECK(o.next[p] == count);
  const tact::worker_stats total = system.stats().total;
  CHECK(total.tx_dispatches == std::uint64_t{producers} * (count + 1));
  CHECK(total.messages_processed == std::uint64_t{producers} * (count + 1));
  CHECK(tact::test::conservation_of(system));
  system.stop();
}

// A relay that forwards each message of a run to a bounded actor waits,
// muted, whenever that mailbox is full: its handler's commit is suspended
// in the middle of the run, and the run's later messages are delivered
// once it goes on, before anything sent to the relay since.
TEST_CASE("a run whose handlers wait for room at a bounded receiver arrives whole, in order",
          "[transactional][runs]") {
  const std::uint32_t workers = GENERATE(1u, 8u);
  const auto count = static_cast<std::uint32_t>(tact::test::scaled(4'000));
  INFO(workers << " workers, " << count << " items");
  tact::actor_system system{{.workers = workers}};
  observed o{1};
  const tx::actor_ref to = tx::spawn(system, sink(o), tx::bounded{8});
  const tx::actor_ref relay =
      tx::spawn(system, {[to](item m) { tx::send(to, m); }}, tx::mode::serialized);
  tx::send(tx::spawn(system, producer(relay, 0, count)), start{});
  system.await_quiescence();
  CHECK(o.received == count);
  CHECK(o.out_of_order == 0);
  const tact::worker_stats total = system.stats().total;
  CHECK(total.sends_waited > 0);  // the relay waited for room, in the middle of runs
  CHECK(tact::test::conservation_of(system));
  system.stop();
}

// Before runs, the burst took an envelope (24 bytes) per message in the
// sink's queue beside the messages themselves: 10,000 envelopes here.
TEST_CASE("a commit's burst to a serialized actor takes no envelope per message",
          "[transactional][runs]") {
  tact::testing::deterministic_system system{{.seed = 1}};
  observed o{1};
  const tx::actor_ref to = tx::spawn(system, sink(o), tx::mode::serialized);
  constexpr std::uint32_t count = 10'000;
  tx::send(tx::spawn(system, producer(to, 0, count)), start{});
  const std::uint64_t before = queue_capacity(system);
  REQUIRE(system.run_one());  // the producer's start: its commit queues the burst
  REQUIRE(o.received == 0);
  const std::uint64_t queued = queue_capacity(system);
  INFO("queue capacity " << before << " -> " << queued << " envelopes");
  CHECK(queued - before < count / 16);
  // Each entry holds at most tx_run_most messages (docs/fairness.md: a
  // turn runs at most one run past its gulp budget): the schedule runs
  // one entry per step. 10,000 = 156 x 64 + 16, and the last 16 still
  // make a run (defaults::claim_joins).
  constexpr std::uint64_t most = tact::defaults::tx_run_most;
  CHECK(system.run() == (count + most - 1) / most);
  CHECK(o.received == count);
  CHECK(o.out_of_order == 0);
  CHECK(tact::test::conservation_of(system));
}

TEST_CASE("a burst to a serialized actor left queued at stop is reported message by message",
          "[transactional][runs]") {
  tact::test::diagnostics_log log;
  tact::system_config config = tact::testing::deterministic_config();
  config.on_diagnostic = log.handler();
  constexpr std::uint32_t count = 1'000;
  observed o{1};
  {
    tact::testing::deterministic_system system{{.seed = 1}, config};
    const tx::actor_ref to = tx::spawn(system, sink(o), tx::mode::serialized);
    tx::send(tx::spawn(system, producer(to, 0, count)), start{});
    REQUIRE(system.run_one());  // the producer commits the burst
    // Stopped with the burst queued: what a system destroyed by a failed
    // test does (a stop() otherwise runs what is queued first).
    tact::detail::executor_of(system).stepping()->halt();
    system.stop();
    CHECK(system.stats().total.messages_discarded == count);
    CHECK(tact::test::conservation_of(system));
  }
  CHECK(o.received == 0);
  REQUIRE(log.count(tact::diagnostic_kind::messages_unreceived) == 1);
  const std::string text = log.of(tact::diagnostic_kind::messages_unreceived).front().text;
  INFO(text);
  CHECK(text.find(std::to_string(count) + " message(s) were sent but never received") !=
        std::string::npos);
}
