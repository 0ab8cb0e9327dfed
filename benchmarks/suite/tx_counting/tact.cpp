// transactional counting, tact: counting's workload and Savina protocol
// (counting/tact.cpp documents it) on transactional actors. The producer's
// start handler stages `messages` Increments and a Retrieve, which commit
// together when it returns; the counter keeps its count in its behaviour
// and becomes counter(count + 1) on every Increment, answering Retrieve to
// the customer it carries. The producer hands the count to main.
//
// The counter is spawned tx::mode::serialized, as an actor that becomes on
// every message should be: its messages all go to its home queue and run
// one at a time, so its becomes never collide, and the Retrieve, queued
// after the Increments by the same commit, is handled after them (a
// parallel actor promises no such order). tx_counter shows what the same
// counter costs left parallel.
//
// Parameters (full / --quick): as counting (--messages 10,000,000 /
// 500,000). Every send makes a message, all in flight at once: the burst
// holds them all until the counter drains it.
//
// Timed: from the start message to quiescence. Checked: the count, and
// messages + 3 messages committed (+ 1, the report to main), none rolled
// back or unmatched.
#include <cstdint>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "../counting/params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

struct start {};
struct increment {};
struct retrieve {};
struct result {
  std::uint64_t count;
};

tx::behaviour counter(std::uint64_t count) {
  return {
      [count](increment) { tx::become(counter(count + 1)); },
      [count](const tx::actor_ref& customer, retrieve) { tx::send(customer, result{count}); },
  };
}

tx::behaviour producer(const tx::actor_ref& target, std::uint64_t increments,
                       const tx::actor_ref& report) {
  return {
      [target, increments](start) {
        for (std::uint64_t i = 0; i < increments; ++i) tx::send(target, increment{});
        tx::send(target, tx::self(), retrieve{});
      },
      [report](result r) { tx::send(report, r.count); },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::counting::increments(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::optional<std::uint64_t> counted;
  const tx::actor_ref report = tx::spawn(system, {[&counted](std::uint64_t c) { counted = c; }});
  tx::actor_ref source = tx::spawn(
      system, producer(tx::spawn(system, counter(0), tx::mode::serialized), n, report));
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    tx::send(source, start{});
    system.await_quiescence();
  });

  const std::uint64_t messages = suite::counting::messages(n);
  suite::check(counted == n, "the counter counted " + std::to_string(counted.value_or(0)) +
                                 " of " + std::to_string(n) + " increments");
  suite::tx::check_commits(system, before, messages + 1);
  source.reset();
  system.stop();
  suite::report(o, "tx_counting", "tact", secs, messages);
}
