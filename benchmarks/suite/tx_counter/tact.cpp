// contended counter, tact: `clients` transactional actors each send
// `increments` increments to one shared counter, a parallel-mode
// transactional actor whose state is its count: every increment commits
// tx::become(counter(n + 1)). A parallel actor may run on every worker at
// once, so with two or more workers the increments collide: a handler that
// loses the become race runs again against the new count, and a message
// that loses `collision_limit` races in a row (system_config, default 32)
// switches the counter to serialized for good, after which its messages
// are forwarded to its home queue and its mailbox is bounded
// (system_config::collision_bound), so clients that outrun it are muted
// (docs/transactional.md). This workload
// measures what that costs next to CAF's counter, which simply runs one
// message at a time. (An actor known to become on every message should be
// spawned tx::mode::serialized, as tx_counting's counter is: here the
// engine has to find that out.)
//
// A client is a chain: each step sends one increment to the counter and
// the next step to itself, so every client keeps sending for the whole run
// and the counter's increments come from every worker at once. After
// quiescence main asks the counter for its count (tx::ask). In all
//   clients x increments steps + as many increments + 1 get + 1 answer.
//
// Parameters (full / --quick):
//   --clients     client actors, at least 1 (8 / 8): several per worker
//   --increments  increments per client, at least 1 (250,000 / 10,000)
//
// Timed: from the first client's start to the answer of the get. Checked:
// the count is clients x increments, and every message committed exactly
// once. The engine's collision figures are printed on stderr.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

struct increment {};
struct get {};

tx::behaviour counter(std::uint64_t n) {
  return {
      [n](increment) { tx::become(counter(n + 1)); },
      [n](const tx::actor_ref& customer, get) { tx::send(customer, n); },
  };
}

// Each step: one increment, then the next step, `left` counting down.
tx::behaviour client(const tx::actor_ref& target) {
  return {[target](std::uint64_t left) {
    tx::send(target, increment{});
    if (left > 1) tx::send(tx::self(), left - 1);
  }};
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::contended_counter::params p = suite::contended_counter::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  const tact::worker_stats before = suite::tx::totals(system);
  std::optional<std::uint64_t> count;
  const double secs = suite::seconds([&] {
    const tx::actor_ref shared = tx::spawn(system, counter(0));
    for (std::uint64_t i = 0; i < p.clients; ++i)
      tx::send(tx::spawn(system, client(shared)), p.increments);
    system.await_quiescence();
    if (auto answer = tx::ask<std::uint64_t>(system, shared, std::chrono::seconds{60}, get{}))
      count = *answer;
  });

  suite::check(count.has_value(), "the counter did not answer");
  suite::check(*count == suite::contended_counter::total(p),
               "the counter counted " + std::to_string(*count) + " of " +
                   std::to_string(suite::contended_counter::total(p)) + " increments");
  system.await_quiescence();
  suite::tx::check_commits(system, before, suite::contended_counter::messages(p));
  const tact::worker_stats after = suite::tx::totals(system);
  std::cerr << "collisions " << after.tx_collisions - before.tx_collisions << ", retries "
            << after.tx_retries - before.tx_retries << ", serializations "
            << after.tx_serializations - before.tx_serializations << ", dispatches "
            << after.tx_dispatches - before.tx_dispatches << '\n';
  system.stop();
  suite::report(o, "tx_counter", "tact", secs, suite::contended_counter::messages(p));
}
