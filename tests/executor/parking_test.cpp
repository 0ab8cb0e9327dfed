#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/test_support.hpp"

namespace {

struct tick : tact::message {
  std::uint64_t seq = 0;
};

// Counts ticks and checks they arrive in send order.
struct tally : tact::actor {
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  tact::allocation receive(tick& t) {
    if (t.seq != received) ++out_of_order;
    ++received;
    return Nodelete;
  }
};

// Workers that park after a single empty sweep: every pause in the sends
// below really puts the system to sleep.
tact::system_config sleepy(std::uint32_t workers) {
  return {.workers = workers, .idle_spins = 0, .idle_yields = 0};
}

}  // namespace

TEST_CASE("an idle system parks every worker") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{{.workers = workers}};
  system.await_quiescence();
  const tact::system_stats stats = system.stats();
  REQUIRE(stats.workers.size() == workers);
  for (const tact::worker_stats& w : stats.workers) {
    CHECK(w.parks >= 1);
    CHECK(w.parks == w.wakeups + 1);  // parked now, woken after every earlier park
  }
}

TEST_CASE("a parked system receives every one of 100,000 sends from another thread") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t sends = tact::test::scaled(100'000);
  tact::actor_system system{sleepy(workers)};
  tally counter;
  std::vector<tick> ticks(sends);
  for (std::uint64_t i = 0; i < sends; ++i) {
    // Every other send goes to a system known to be asleep; the rest race
    // with workers on their way to parking.
    if (i % 2 == 0) system.await_quiescence();
    ticks[i].seq = i;
    counter | ticks[i];
  }
  system.await_quiescence();
  CHECK(counter.received == sends);
  CHECK(counter.out_of_order == 0);
  CHECK(system.stats().total.wakeups > 0);
  counter | tact::finished_msg;
  system.stop();
}

TEST_CASE("several threads sending to a parking system lose no message") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr int senders = 4;
  const std::uint64_t per_sender = tact::test::scaled(25'000);
  tact::actor_system system{sleepy(workers)};
  std::vector<std::unique_ptr<tally>> counters;
  for (int s = 0; s < senders; ++s) counters.push_back(std::make_unique<tally>());
  // Built in place: copies of a prototype would be destroyed unsent.
  std::vector<std::vector<tick>> ticks(senders);
  for (auto& row : ticks) row = std::vector<tick>(per_sender);
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s)
    threads.emplace_back([&, s] {
      for (std::uint64_t i = 0; i < per_sender; ++i) {
        ticks[s][i].seq = i;
        *counters[s] | ticks[s][i];
        if (i % 64 == 0) std::this_thread::yield();  // let workers run dry and park
      }
    });
  for (std::thread& t : threads) t.join();
  system.await_quiescence();
  for (const auto& c : counters) {
    CHECK(c->received == per_sender);
    CHECK(c->out_of_order == 0);
    *c | tact::finished_msg;
  }
  system.stop();
}

namespace {

struct poke : tact::message {};

// Writes a plain field: only await_quiescence's handshake orders that write
// before the test thread's read, so a missing acquire or release in it is
// a data race ThreadSanitizer reports.
struct scribe : tact::actor {
  std::uint64_t value = 0;
  tact::allocation receive(poke&) {
    ++value;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("await_quiescence makes every behaviour's writes visible to its caller") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  // One queue per worker, so each scribe lives on a different worker.
  tact::actor_system system{
      {.workers = workers, .queues = workers, .idle_spins = 0, .idle_yields = 0}};
  std::vector<std::unique_ptr<scribe>> scribes;
  for (std::uint32_t i = 0; i < workers; ++i) scribes.push_back(std::make_unique<scribe>());
  std::vector<poke> pokes(workers);
  const std::uint64_t rounds = tact::test::scaled(2'000);
  std::uint64_t mismatches = 0;
  for (std::uint64_t round = 1; round <= rounds; ++round) {
    system.await_quiescence();
    for (std::uint32_t i = 0; i < workers; ++i) *scribes[i] | pokes[i];
    system.await_quiescence();
    for (const auto& s : scribes) mismatches += s->value == round ? 0 : 1;
  }
  CHECK(mismatches == 0);
  for (const auto& s : scribes) *s | tact::finished_msg;
  system.stop();
}
