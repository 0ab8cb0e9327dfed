// Behaviours that throw at a configurable rate (TACT_FAULT_RATE, per
// message) under load, with more workers than cores. Which messages throw
// is drawn from the run's seed (TACT_TEST_SEED replays a failure), so the
// test knows in advance how many will. Classic: what a behaviour did before
// it threw stays done, the message still counts as received once, and every
// other message arrives once, in order per sender. Transactional: a handler
// that throws leaves no staged effect (no send, no become, no created
// actor), and the others commit exactly once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"
#include "transactional/tx_support.hpp"

namespace {

namespace tx = tact::tx;
using tact::test::mix;
using tact::test::sequenced;

// Whether the handling of message `key` throws, at `rate`.
bool throws(std::uint64_t seed, std::uint64_t key, double rate) {
  return static_cast<double>(mix(seed, key) >> 11) * 0x1.0p-53 < rate;
}

std::atomic<std::int64_t> live_hops{0};

// A message that travels `hops_left` more times, between random actors.
struct hop : sequenced {
  hop(std::uint64_t sender, std::uint64_t seq, std::uint32_t hops)
      : sequenced{sender, seq}, hops_left{hops} {
    set_allocation(tact::allocation::Delete);
    live_hops.fetch_add(1, std::memory_order_relaxed);
  }
  ~hop() override { live_hops.fetch_sub(1, std::memory_order_relaxed); }
  std::uint32_t hops_left;
};

// Receives hops, passes each on (to an actor drawn from the run's seed),
// and then throws if the draw says so: the pass stays done.
struct juggler : tact::actor {
  juggler(tact::actor_system& system, std::uint64_t index,
          std::vector<std::unique_ptr<juggler>>& peers, std::size_t actors, std::uint64_t seed,
          double rate)
      : tact::actor{system},
        index_{index},
        peers_{peers},
        seed_{seed},
        rate_{rate},
        sent_to_(actors, 0) {}

  tact::allocation receive(hop& h) {
    fifo.accept(h);
    const std::uint64_t key = (index_ << 40) ^ (h.sender << 20) ^ h.seq;
    if (h.hops_left > 0) {
      const std::size_t next = mix(seed_, key) % peers_.size();
      *peers_[next] | *new hop{index_, sent_to_[next]++, h.hops_left - 1};
    }
    if (throws(seed_, key, rate_)) {
      ++thrown;
      throw std::runtime_error{"injected"};
    }
    return Nodelete;
  }

  tact::test::fifo_check fifo;
  std::uint64_t thrown = 0;

 private:
  const std::uint64_t index_;
  std::vector<std::unique_ptr<juggler>>& peers_;
  const std::uint64_t seed_;
  const double rate_;
  std::vector<std::uint64_t> sent_to_;  // per peer: the numbers of this one's stream to it
};


}  // namespace

TEST_CASE("classic behaviours throwing under load lose, duplicate and reorder nothing") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const double rate = tact::test::fault_rate(GENERATE(0.05, 0.5));
  const std::uint64_t seed = tact::test::test_seed();
  INFO("TACT_TEST_SEED=" << seed << " TACT_FAULT_RATE=" << rate << ", " << workers << " workers");
  constexpr std::size_t actors = 64;
  constexpr std::uint64_t threads = 3;
  constexpr std::uint32_t hops = 20;
  const std::uint64_t per_thread = tact::test::scaled(4000);

  tact::test::diagnostic_tally diagnostics;
  {
    tact::actor_system system{
        tact::test::configured({.workers = workers, .on_diagnostic = diagnostics.handler()})};
    std::vector<std::unique_ptr<juggler>> peers;
    peers.reserve(actors);
    for (std::size_t i = 0; i < actors; ++i)
      peers.push_back(std::make_unique<juggler>(system, i, peers, actors, seed, rate));
    std::vector<std::thread> senders;
    for (std::uint64_t t = 0; t < threads; ++t)
      senders.emplace_back([&, t] {
        std::vector<std::uint64_t> sent(actors, 0);
        for (std::uint64_t i = 0; i < per_thread; ++i) {
          const std::size_t to = mix(seed, (t << 32) | i) % actors;
          *peers[to] | *new hop{actors + t, sent[to]++, hops};
        }
      });
    for (std::thread& s : senders) s.join();
    system.await_quiescence();

    std::uint64_t received = 0;
    std::uint64_t thrown = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t out_of_order = 0;
    for (const auto& p : peers) {
      received += p->fifo.received();
      thrown += p->thrown;
      duplicates += p->fifo.duplicates();
      out_of_order += p->fifo.out_of_order();
    }
    CHECK(received == threads * per_thread * (hops + 1));
    CHECK(duplicates == 0);
    CHECK(out_of_order == 0);
    CHECK(diagnostics.count(tact::diagnostic_kind::behaviour_exception) == thrown);
    CHECK(diagnostics.other_than({tact::diagnostic_kind::behaviour_exception}) == 0);
    CHECK(live_hops.load() == 0);  // thrown or not, every message got its Delete
    CHECK(tact::test::conservation_of(system));
    if (rate > 0) CHECK(thrown > 0);
    for (auto& p : peers) *p | tact::finished_msg;
    system.stop();
    CHECK(tact::test::conservation_of(system));
    tact::test::record_figures(system);
  }
}

namespace {

struct deposit {
  std::uint64_t id;
};
struct get_balance {};
struct poke {};

// Counts the children that committed handlers created and poked, and all
// children alive (made by any handler, rolled back or not).
struct child_census {
  std::atomic<std::uint64_t> poked{0};
  std::atomic<std::int64_t> live{0};
};
struct census_token {
  explicit census_token(child_census& c) : of{&c} { of->live.fetch_add(1); }
  census_token(const census_token& other) : of{other.of} { of->live.fetch_add(1); }
  census_token& operator=(const census_token&) = delete;
  ~census_token() { of->live.fetch_sub(1); }
  child_census* of;
};

// An account: each deposit stages a record to the ledger, a become, and a
// child actor (poked); then throws if the draw says so.
tx::behaviour account(int n, tx::actor_ref ledger, child_census& children, std::uint64_t seed,
                      double rate) {
  return {[=, &children](deposit d) {
            tx::send(ledger, d.id);
            tx::become(account(n + 1, ledger, children, seed, rate));
            tx::send(tx::create({[token = census_token{children}](poke) {
                       token.of->poked.fetch_add(1);
                     }}),
                     poke{});
            if (throws(seed, d.id, rate)) throw std::runtime_error{"injected"};
          },
          [n](const tx::actor_ref& customer, get_balance) { tx::send(customer, n); }};
}

}  // namespace

TEST_CASE("transactional handlers throwing under load leave no staged effect") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const double rate = tact::test::fault_rate(GENERATE(0.05, 0.5));
  const std::uint64_t seed = tact::test::test_seed();
  INFO("TACT_TEST_SEED=" << seed << " TACT_FAULT_RATE=" << rate << ", " << workers << " workers");
  constexpr std::size_t accounts = 16;  // half serialized, half parallel
  constexpr std::uint64_t threads = 2;
  const std::uint64_t per_thread = tact::test::scaled(5000);

  tact::test::record<std::uint64_t> ledger_entries;
  child_census children;
  std::atomic<std::uint64_t> rollbacks_seen{0};
  tact::test::diagnostic_tally diagnostics;
  {
    tact::actor_system system{tact::test::configured({.workers = workers,
                                                      .on_diagnostic = diagnostics.handler(),
                                                      .on_rollback = [&](const tx::rollback&) {
                                                        rollbacks_seen.fetch_add(1);
                                                      }})};
    const tx::actor_ref ledger = tx::spawn(system, tact::test::recorder(ledger_entries));
    std::vector<tx::actor_ref> all;
    for (std::size_t i = 0; i < accounts; ++i)
      all.push_back(tx::spawn(system, account(0, ledger, children, seed, rate),
                              i % 2 == 0 ? tx::mode::serialized : tx::mode::parallel));
    // What should commit: per account, the deposits whose handler does not throw.
    std::vector<std::uint64_t> committed_per_account(accounts, 0);
    std::vector<std::uint64_t> committed_ids;
    std::uint64_t throwing = 0;
    for (std::uint64_t id = 0; id < threads * per_thread; ++id) {
      if (throws(seed, id, rate)) {
        ++throwing;
        continue;
      }
      ++committed_per_account[mix(seed, ~id) % accounts];
      committed_ids.push_back(id);
    }
    std::vector<std::thread> senders;
    for (std::uint64_t t = 0; t < threads; ++t)
      senders.emplace_back([&, t] {
        for (std::uint64_t id = t * per_thread; id < (t + 1) * per_thread; ++id)
          tx::send(all[mix(seed, ~id) % accounts], deposit{id});
      });
    for (std::thread& s : senders) s.join();
    system.await_quiescence();
    CHECK(tact::test::conservation_of(system));

    std::vector<std::uint64_t> entries = ledger_entries.values();
    std::sort(entries.begin(), entries.end());
    CHECK(entries == committed_ids);  // every committed record once, none rolled back
    for (std::size_t i = 0; i < accounts; ++i) {
      const auto balance = tx::ask<int>(system, all[i], std::chrono::seconds{60}, get_balance{});
      REQUIRE(balance);
      CHECK(static_cast<std::uint64_t>(*balance) == committed_per_account[i]);
    }
    const tact::worker_stats total = system.stats().total;
    CHECK(total.tx_rollbacks == throwing);
    CHECK(rollbacks_seen.load() == throwing);
    CHECK(children.poked.load() == committed_ids.size());
    CHECK(diagnostics.other_than({tact::diagnostic_kind::behaviour_exception}) == 0);
    if (rate > 0) CHECK(throwing > 0);
    tact::test::record_figures(system);
  }
  // Children of rolled-back handlers were never reachable; all are gone.
  CHECK(children.live.load() == 0);
}
