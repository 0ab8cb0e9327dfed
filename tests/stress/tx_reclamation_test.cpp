#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <tact/transactional.hpp>

#include "support/asymmetric_fence.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Many parallel actors becoming under load from several senders while
// their replaced behaviours are reclaimed: every increment counts exactly
// once, and every behaviour ever built is destroyed by the end (under
// AddressSanitizer, none of them is touched after it is freed).
namespace {

namespace tx = tact::tx;

struct increment {};
struct get {};

// Counts live behaviours through what they capture.
struct census {
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> built{0};
};
struct tally {
  census* of;
  explicit tally(census& c) : of{&c} { of->live.fetch_add(1); of->built.fetch_add(1); }
  tally(const tally& other) : of{other.of} { of->live.fetch_add(1); of->built.fetch_add(1); }
  tally& operator=(const tally&) = delete;
  ~tally() { of->live.fetch_sub(1); }
};

tx::behaviour counter(census& c, int n) {
  return {[t = tally{c}, &c, n](increment) { tx::become(counter(c, n + 1)); },
          [n](const tx::actor_ref& customer, get) { tx::send(customer, n); }};
}

// Two threads send every counter `increments` increments in all; then each
// counter is asked for its count. Returns the counts, in counter order.
std::vector<int> count_up(tact::actor_system& system, const std::vector<tx::actor_ref>& counters,
                          int increments) {
  std::vector<std::thread> senders;
  for (int s = 0; s < 2; ++s)
    senders.emplace_back([&] {
      for (int k = 0; k < increments / 2; ++k)
        for (const tx::actor_ref& a : counters) tx::send(a, increment{});
    });
  for (std::thread& t : senders) t.join();
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));
  std::vector<std::atomic<int>> values(counters.size());
  for (std::size_t i = 0; i < counters.size(); ++i)
    tx::send(counters[i], tx::spawn(system, {[&values, i](int n) { values[i].store(n); }}), get{});
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));
  tact::test::record_figures(system);
  std::vector<int> counts;
  for (const std::atomic<int>& v : values) counts.push_back(v.load());
  return counts;
}

}  // namespace

TEST_CASE("replaced behaviours are reclaimed while other workers may still run them") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  const int actors = 16;
  const int per_actor = static_cast<int>(tact::test::scaled(20'000));
  census c;
  {
    tact::actor_system system{tact::test::configured({.workers = workers})};
    std::vector<tx::actor_ref> counters;
    for (int i = 0; i < actors; ++i) counters.push_back(tx::spawn(system, counter(c, 0)));
    for (const int count : count_up(system, counters, per_actor)) CHECK(count == per_actor / 2 * 2);
    CHECK(system.stats().total.tx_becomes == static_cast<std::uint64_t>(actors * (per_actor / 2 * 2)));
  }
  CHECK(c.live.load() == 0);
  CHECK(c.built.load() > actors * per_actor / 2);
}

namespace {

// Its increment's on_commit action reads the count through a reference to
// the capture of the behaviour that staged it, which that commit replaces.
tx::behaviour watched_counter(census& c, std::atomic<int>& last_seen, int n) {
  return {[t = tally{c}, &c, &last_seen, n](increment) {
            tx::become(watched_counter(c, last_seen, n + 1));
            tx::on_commit([&n, &last_seen] { last_seen.store(n + 1); });
          },
          [n](const tx::actor_ref& customer, get) { tx::send(customer, n); }};
}

}  // namespace

// A serialized actor's replaced behaviour is freed by the commit itself
// (nobody else can be running it), after the commit's actions, which may
// still read its captures (under AddressSanitizer, a free before them
// would be reported).
TEST_CASE("a serialized actor's replaced behaviours are freed after its commit's actions") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const int actors = 8;
  const int per_actor = static_cast<int>(tact::test::scaled(20'000));
  census c;
  std::vector<std::atomic<int>> last_seen(actors);
  {
    tact::actor_system system{tact::test::configured({.workers = workers})};
    std::vector<tx::actor_ref> counters;
    for (int i = 0; i < actors; ++i)
      counters.push_back(
          tx::spawn(system, watched_counter(c, last_seen[i], 0), tx::mode::serialized));
    for (const int count : count_up(system, counters, per_actor)) CHECK(count == per_actor / 2 * 2);
    for (const std::atomic<int>& seen : last_seen) CHECK(seen.load() == per_actor / 2 * 2);
    const tact::worker_stats totals = system.stats().total;
    CHECK(totals.tx_becomes == static_cast<std::uint64_t>(actors * (per_actor / 2 * 2)));
    CHECK(totals.tx_collisions == 0);
  }
  CHECK(c.live.load() == 0);
}

namespace {

struct hold {};
struct step {};

// Becomes `left` more times, a message to itself each; then records how
// many behaviours are alive, and lets the held worker go.
tx::behaviour chain(census& c, std::atomic<std::int64_t>& live_at_end, std::atomic<bool>& released,
                    int left) {
  return {[t = tally{c}, &c, &live_at_end, &released, left](step) {
    if (left == 0) {
      live_at_end.store(c.live.load());
      released.store(true);
      return;
    }
    tx::become(chain(c, live_at_end, released, left - 1));
    tx::send(tx::self(), step{});
  }};
}

}  // namespace

// A worker that stays in the middle of its batch (descheduled by the OS on
// a busy machine; here, a handler that waits for a flag) holds back only
// what it may be running: the behaviours the other worker replaces
// meanwhile are freed as it goes (docs/transactional.md, "Reclaiming
// replaced behaviours"). Before, every one of them waited for the held
// worker.
TEST_CASE("a worker held in the middle of its batch holds back few replaced behaviours") {
  if (!tact::detail::can_fence_heavily()) {
    WARN("the kernel gives no membarrier: replaced behaviours wait for every worker");
    return;
  }
  const int becomes = static_cast<int>(tact::test::scaled(40'000));
  census c;
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
  std::atomic<std::int64_t> live_at_end{-1};
  {
    // Every worker runs (no governor), so that the chain has one while the
    // other is held.
    tact::actor_system system{{.workers = 2, .adapt_every = std::chrono::nanoseconds{0}}};
    const tx::actor_ref holder = tx::spawn(system, {[&](hold) {
                                             holding.store(true);
                                             holding.notify_one();
                                             while (!released.load()) std::this_thread::yield();
                                           }});
    tx::send(holder, hold{});
    holding.wait(false);
    // The chain's last step lets the holder go.
    tx::send(tx::spawn(system, chain(c, live_at_end, released, becomes)), step{});
    system.await_quiescence();
  }
  INFO(becomes << " becomes");
  CHECK(live_at_end.load() < 2'000);  // 1,024 retired at most, and what one collect adds
  CHECK(c.live.load() == 0);
}
