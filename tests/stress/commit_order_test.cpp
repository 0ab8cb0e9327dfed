#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// A parallel actor that becomes on every message commits one message at a
// time, in one order, though its messages run on several workers at once:
// its on_commit actions must run in that order too (docs/transactional.md,
// "Order"). Here each action sends the count its commit reached to a
// classic actor, which must see 1, 2, 3, ... with no gap, repeat or
// inversion. Its actions once ran as soon as their commit released the
// behaviour slot, so the next commit, on another worker, could run its
// action first: a few thousand inversions per 100,000 at 2 workers.
namespace {

namespace tx = tact::tx;

struct increment {};

struct count_note : tact::message {
  explicit count_note(std::uint64_t n) : tact::message{tact::allocation::Delete}, n{n} {}
  std::uint64_t n;
};

// Plain state: a classic actor runs one message at a time; the test reads
// it once the system is quiescent.
struct collector : tact::actor {
  explicit collector(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  tact::allocation receive(count_note& m) {
    if (m.n != received + 1) ++out_of_order;
    ++received;
    return Nodelete;
  }
};

tx::behaviour counting(collector& sink, std::uint64_t n) {
  return {[&sink, n](increment) {
    tx::become(counting(sink, n + 1));
    tx::on_commit([&sink, n] { tact::send(sink, *new count_note{n + 1}); });
  }};
}

}  // namespace

namespace {

// One run: 2 threads send `per_sender` increments each to a counter whose
// collisions never serialize it. True if its commits raced: on two workers
// at once, some losing a become race (a busy machine may run them one
// after the other).
bool count_in_order(std::uint32_t workers, std::uint64_t per_sender) {
  tact::actor_system system{
      tact::test::configured({.workers = workers, .collision_limit = 1'000'000})};
  collector sink{system};
  const tx::actor_ref counter = tx::spawn(system, counting(sink, 0));
  std::vector<std::thread> senders;
  for (int s = 0; s < 2; ++s)
    senders.emplace_back([&] {
      for (std::uint64_t i = 0; i < per_sender; ++i) tx::send(counter, increment{});
    });
  for (std::thread& t : senders) t.join();
  system.await_quiescence();
  const tact::system_stats s = system.stats();
  CHECK(sink.received == 2 * per_sender);
  CHECK(sink.out_of_order == 0);
  CHECK(s.total.tx_becomes == 2 * per_sender);
  CHECK(s.total.tx_serializations == 0);
  CHECK(tact::test::conservation_of(system));
  std::uint32_t dispatching = 0;
  for (const tact::worker_stats& w : s.workers) dispatching += w.tx_dispatches > 0 ? 1 : 0;
  sink | tact::finished_msg;
  system.stop();
  return dispatching >= 2 && s.total.tx_collisions > 0;
}

}  // namespace

TEST_CASE("a parallel actor's on_commit actions run in its commit order, on any number of workers",
          "[stress]") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  INFO(workers << " workers");
  // The order at stake needs commits racing: run again (a bounded number
  // of times) until they did.
  bool raced = false;
  for (int run = 0; run < 20 && !raced; ++run)
    raced = count_in_order(workers, tact::test::scaled(50'000));
  CHECK(raced);
}
