// Behaviours that block for a long time, one on every worker but one:
// the blocked workers' other queues are taken by the free worker, and
// every actor there keeps progressing. The blockers wait for that progress
// itself (counted messages), so the test passes only if the queues moved,
// however long that takes; a deadlock guard turns a lost queue into a
// failure instead of a hang.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using tact::test::sequenced;

// A failure, never a wait that passes; well inside the 120 s meson gives
// the whole test, so a lost queue is reported here rather than killed.
constexpr auto deadlock_guard = 30s;

// What the blockers wait for: messages run on queues no blocker holds.
struct progress {
  std::atomic<std::uint64_t> done{0};
  std::uint64_t target = 0;
  std::atomic<int> holding{0};
  std::atomic<int> gave_up{0};

  // The body of every blocker: returns once the target is reached.
  void block() {
    holding.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + deadlock_guard;
    while (done.load(std::memory_order_acquire) < target) {
      if (std::chrono::steady_clock::now() > give_up) {
        gave_up.fetch_add(1);
        return;
      }
      std::this_thread::yield();
    }
  }
};

struct hold : tact::message {};

struct blocker : tact::actor {
  explicit blocker(progress& p) : progress_{p} {}
  tact::allocation receive(hold&) {
    progress_.block();
    return Nodelete;
  }
  progress& progress_;
};

// Counts its jobs (toward the blockers' target if it is on a free queue)
// and checks their order.
struct busy : tact::actor {
  busy(progress& p, bool counts) : progress_{p}, counts_{counts} {}
  tact::allocation receive(sequenced& m) {
    fifo.accept(m);
    volatile std::uint64_t sink = 0;
    for (int i = 0; i < 500; ++i) sink = sink + static_cast<std::uint64_t>(i);
    if (counts_) progress_.done.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
  tact::test::fifo_check fifo;
  progress& progress_;
  const bool counts_;
};

struct increment {};

}  // namespace

TEST_CASE("actors keep progressing while every worker but one is blocked in a long behaviour") {
  const std::uint32_t workers = GENERATE(2u, 4u, 8u);
  CAPTURE(workers);
  const std::uint32_t queues = 2 * workers;  // worker w owns queues 2w and 2w + 1
  const std::uint64_t jobs = tact::test::scaled(1000);
  progress p;
  tact::actor_system system{{.workers = workers, .queues = queues}};

  // Actors made from this thread (and transactional actors' home queues)
  // take queues 0, 1, 2, ... in turn: a blocker on the first queue of each
  // of workers 0 .. W-2 (a serialized transactional one on worker 0), busy
  // actors everywhere else, then three more busy actors per queue, behind
  // the blockers too.
  std::vector<std::unique_ptr<blocker>> blockers;
  tx::actor_ref tx_blocker;
  std::vector<std::unique_ptr<busy>> actors;
  for (std::uint32_t round = 0; round < 4; ++round)
    for (std::uint32_t q = 0; q < queues; ++q) {
      const bool blocked = q % 2 == 0 && q / 2 < workers - 1;
      if (round == 0 && q == 0)
        tx_blocker = tx::spawn(system, {[&p](hold) { p.block(); }}, tx::mode::serialized);
      else if (round == 0 && blocked)
        blockers.push_back(std::make_unique<blocker>(p));
      else
        actors.push_back(std::make_unique<busy>(p, !blocked));
    }
  // Parallel transactional counters, whose messages land on any queue.
  std::atomic<std::uint64_t> increments{0};
  std::vector<tx::actor_ref> counters;
  for (int i = 0; i < 4; ++i)
    counters.push_back(tx::spawn(system, {[&increments](increment) { increments.fetch_add(1); }}));
  system.await_quiescence();

  std::uint64_t counted = 0;
  for (const auto& a : actors) counted += a->counts_ ? jobs : 0;
  p.target = counted;
  std::vector<hold> holds(blockers.size());
  tx::send(tx_blocker, hold{});
  for (std::size_t b = 0; b < blockers.size(); ++b) *blockers[b] | holds[b];
  // Every blocker holds its worker before the load comes.
  const auto give_up = std::chrono::steady_clock::now() + deadlock_guard;
  while (p.holding.load() < static_cast<int>(workers - 1) &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  REQUIRE(p.holding.load() == static_cast<int>(workers - 1));

  std::vector<std::vector<sequenced>> messages(actors.size());
  for (auto& row : messages) row = std::vector<sequenced>(jobs);
  for (std::uint64_t j = 0; j < jobs; ++j) {
    for (std::size_t a = 0; a < actors.size(); ++a) {
      messages[a][j].seq = j;
      *actors[a] | messages[a][j];
    }
    tx::send(counters[j % counters.size()], increment{});
  }
  // Returns once the blockers have returned: after the target was reached.
  system.await_quiescence();

  CHECK(p.gave_up.load() == 0);
  std::uint64_t received = 0;
  std::uint64_t unclean = 0;
  for (const auto& a : actors) {
    received += a->fifo.received();
    unclean += a->fifo.clean() ? 0 : 1;
  }
  CHECK(received == jobs * actors.size());
  CHECK(unclean == 0);
  CHECK(increments.load() == jobs);
  CHECK(system.stats().total.steals >= 1);
  CHECK(tact::test::conservation_of(system));

  for (auto& b : blockers) *b | tact::finished_msg;
  for (auto& a : actors) *a | tact::finished_msg;
  system.stop();
}
