// Bounded stress of the governor (docs/performance.md, "Fewer workers for
// message-bound work"): with short epochs it stands workers down and wakes
// them again many times while messages wander among thousands of actors,
// more workers than cores. Every message must be received exactly once,
// each sender's messages in send order, whichever worker sweeps a queue;
// the system must reach quiescence and stop with workers resting; and
// work that needs every worker at once must get them back.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

// Holds its worker until `inside` counts every party: only possible once
// every worker runs one of them at the same time.
struct gather : tact::message {};

struct peer : tact::actor {
  std::vector<std::unique_ptr<peer>>* peers = nullptr;
  peer* successor = nullptr;
  std::vector<std::atomic<std::uint8_t>>* arrivals = nullptr;
  std::atomic<std::uint32_t>* inside = nullptr;
  std::uint32_t parties = 0;
  std::uint32_t gathered = 0;  // gatherings that completed within the patience
  std::uint64_t tokens_handled = 0;
  tact::test::fifo_check links;  // from the predecessor
  std::vector<std::unique_ptr<tact::test::sequenced>> outgoing;
  std::uint64_t links_sent = 0;

  tact::allocation receive(tact::test::token& t) {
    ++tokens_handled;
    // A numbered message to the successor with every eighth token.
    if ((tokens_handled & 7) == 0) {
      auto& m = outgoing.emplace_back(std::make_unique<tact::test::sequenced>());
      m->sender = reinterpret_cast<std::uintptr_t>(this);
      m->seq = links_sent++;
      *successor | *m;
    }
    if (t.hops_left == 0) {
      (*arrivals)[t.id].fetch_add(1, std::memory_order_relaxed);
      return Nodelete;
    }
    --t.hops_left;
    *(*peers)[t.next_random() % peers->size()] | t;
    return Nodelete;
  }
  tact::allocation receive(tact::test::sequenced& m) {
    links.accept(m);
    return Nodelete;
  }
  tact::allocation receive(gather&) {
    inside->fetch_add(1, std::memory_order_acq_rel);
    if (tact::test::eventually(
            [this] { return inside->load(std::memory_order_acquire) >= parties; }))
      ++gathered;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("workers stood down and woken by the governor lose no message and reorder none") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  constexpr std::size_t actors = 2048;
  const std::uint64_t tokens = tact::test::scaled(8'000);
  constexpr std::uint64_t hops = 100;
  constexpr int rounds = 4;
  // Short epochs, so that the count of running workers changes often;
  // longer where everything runs slower (TACT_STRESS_SCALE below 1), so
  // that an epoch still holds enough messages to weigh.
  const auto epoch = std::chrono::microseconds{100} * 100 / tact::test::scaled(100);
  CAPTURE(workers, tokens, epoch.count());

  tact::actor_system system{tact::test::configured({.workers = workers, .adapt_every = epoch})};
  std::vector<std::unique_ptr<peer>> peers;
  std::atomic<std::uint32_t> inside{0};
  for (std::size_t i = 0; i < actors; ++i) peers.push_back(std::make_unique<peer>());
  std::vector<std::atomic<std::uint8_t>> arrivals(tokens * rounds);
  for (std::size_t i = 0; i < actors; ++i) {
    peer& p = *peers[i];
    p.peers = &peers;
    p.successor = peers[(i + 1) % actors].get();
    p.arrivals = &arrivals;
    p.inside = &inside;
    p.parties = workers;
  }
  std::vector<tact::test::token> wandering(tokens * rounds);
  std::vector<gather> gathers(workers * rounds);
  for (int round = 0; round < rounds; ++round) {
    // Message-bound: the governor tries fewer workers, and keeps them.
    for (std::uint64_t i = 0; i < tokens; ++i) {
      tact::test::token& t = wandering[round * tokens + i];
      t.id = round * tokens + i;
      t.hops_left = hops;
      t.rng = tact::test::mix(tact::test::test_seed(), t.id);
      *peers[(i * 7) % actors] | t;
    }
    system.await_quiescence();
    // Then behaviours that need every worker at once: the resting ones
    // must run again (the governor's epoch, ended by a resting worker,
    // shows the running ones stuck).
    inside.store(0);
    for (std::uint32_t w = 0; w < workers; ++w) *peers[w * 131] | gathers[round * workers + w];
    system.await_quiescence();
    CHECK(inside.load() == workers);
  }
  INFO("seed " << tact::test::test_seed());
  CHECK(tact::test::conservation_of(system));

  std::uint64_t handled = 0;
  std::uint64_t links = 0;
  std::uint64_t links_sent = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t gathered = 0;
  for (const auto& p : peers) {
    handled += p->tokens_handled;
    links += p->links.received();
    links_sent += p->links_sent;
    out_of_order += p->links.out_of_order();
    duplicates += p->links.duplicates();
    gathered += p->gathered;
  }
  std::uint64_t arrived_once = 0;
  for (const auto& a : arrivals) arrived_once += a.load() == 1 ? 1 : 0;
  CHECK(arrived_once == tokens * rounds);
  CHECK(handled == tokens * rounds * (hops + 1));
  CHECK(links == links_sent);
  CHECK(out_of_order == 0);
  CHECK(duplicates == 0);
  // Every round's gathering completed, not only the last: a gather that
  // waited out its patience lets `inside` reach the count all the same.
  CHECK(gathered == workers * rounds);
  const tact::system_stats stats = system.stats();
  CHECK(stats.total.messages_processed == handled + links + workers * rounds);
  // The governor did stand workers down: the protocol above was exercised.
  CHECK(stats.total.rests > 0);

  for (auto& p : peers) *p | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
  tact::test::record_figures(system);
}

TEST_CASE("with adapt_every 0 every worker always runs") {
  tact::actor_system system{{.workers = 4, .adapt_every = std::chrono::nanoseconds{0}}};
  std::vector<std::unique_ptr<peer>> peers;
  for (std::size_t i = 0; i < 64; ++i) peers.push_back(std::make_unique<peer>());
  std::vector<std::atomic<std::uint8_t>> arrivals(1000);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    peers[i]->peers = &peers;
    peers[i]->successor = peers[(i + 1) % peers.size()].get();
    peers[i]->arrivals = &arrivals;
  }
  std::vector<tact::test::token> wandering(1000);
  for (std::uint64_t i = 0; i < wandering.size(); ++i) {
    wandering[i].id = i;
    wandering[i].hops_left = 1000;
    wandering[i].rng = i + 1;
    *peers[i % peers.size()] | wandering[i];
  }
  system.await_quiescence();
  CHECK(system.stats().total.rests == 0);
  for (auto& p : peers) *p | tact::finished_msg;
  system.stop();
}
