// Bounded stress: millions of messages among thousands of actors, with
// more workers than cores, under every steal policy. Every message must be
// received exactly once, and messages along each fixed sender->receiver
// edge in send order, however the queues move between workers.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

struct stop_msg : tact::message {};

// Along the ring each actor sends its successor a numbered stream.
struct peer : tact::actor {
  std::vector<std::unique_ptr<peer>>* peers = nullptr;
  peer* successor = nullptr;
  std::vector<std::atomic<std::uint8_t>>* arrivals = nullptr;
  std::uint64_t tokens_handled = 0;
  tact::test::fifo_check links;  // from the predecessor
  std::uint64_t links_to_send = 0;
  std::vector<tact::test::sequenced> outgoing;  // one message per link send, reused never
  std::uint64_t links_sent = 0;

  tact::allocation receive(tact::test::token& t) {
    ++tokens_handled;
    if (links_sent < links_to_send) {  // interleave ring traffic with tokens
      *successor | outgoing[links_sent];
      ++links_sent;
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
  tact::allocation receive(stop_msg&) {
    // Drain whatever ring messages the tokens did not carry out.
    while (links_sent < links_to_send) {
      *successor | outgoing[links_sent];
      ++links_sent;
    }
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("millions of messages among thousands of actors are each received exactly once") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const auto steal = GENERATE(tact::steal_policy::none, tact::steal_policy::random,
                              tact::steal_policy::longest_victim, tact::steal_policy::locality);
  constexpr std::size_t actors = 4096;
  const std::uint64_t tokens = tact::test::scaled(30'000);
  constexpr std::uint64_t hops = 100;
  const std::uint64_t links_per_actor = tact::test::scaled(200);
  CAPTURE(workers, static_cast<int>(steal), tokens, hops);

  tact::actor_system system{tact::test::configured({.workers = workers, .steal = steal})};
  std::vector<std::atomic<std::uint8_t>> arrivals(tokens);
  std::vector<std::unique_ptr<peer>> peers;
  for (std::size_t i = 0; i < actors; ++i) peers.push_back(std::make_unique<peer>());
  for (std::size_t i = 0; i < actors; ++i) {
    peer& p = *peers[i];
    p.peers = &peers;
    p.successor = peers[(i + 1) % actors].get();
    p.arrivals = &arrivals;
    p.links_to_send = links_per_actor;
    p.outgoing.resize(links_per_actor);
    for (std::uint64_t s = 0; s < links_per_actor; ++s) {
      p.outgoing[s].sender = i;
      p.outgoing[s].seq = s;
    }
  }
  std::vector<tact::test::token> wandering(tokens);
  for (std::uint64_t i = 0; i < tokens; ++i) {
    wandering[i].id = i;
    wandering[i].hops_left = hops;
    wandering[i].rng = 0x9E3779B97F4A7C15ull * (i + 1);  // the seed of this token's route
    *peers[i % actors] | wandering[i];
  }
  std::vector<stop_msg> stops(actors);
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));
  for (std::size_t i = 0; i < actors; ++i) *peers[i] | stops[i];
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));

  std::uint64_t handled = 0;
  std::uint64_t links = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t duplicates = 0;
  for (const auto& p : peers) {
    handled += p->tokens_handled;
    links += p->links.received();
    out_of_order += p->links.out_of_order();
    duplicates += p->links.duplicates();
  }
  std::uint64_t arrived_once = 0;
  for (const auto& a : arrivals) arrived_once += a.load() == 1 ? 1 : 0;

  CHECK(arrived_once == tokens);
  CHECK(handled == tokens * (hops + 1));
  CHECK(links == actors * links_per_actor);
  CHECK(out_of_order == 0);
  CHECK(duplicates == 0);
  const tact::worker_stats total = system.stats().total;
  CHECK(total.messages_processed == handled + links + actors);
  CHECK(total.messages_sent == total.messages_processed);

  for (auto& p : peers) *p | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
  tact::test::record_figures(system);
}
