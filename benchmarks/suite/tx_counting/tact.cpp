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
// holds them all until the counter drains it. And:
//   --bound  the counter's mailbox bound (tx::bounded); 0: none. With one,
//            a commit that finds the counter full mutes the producer until
//            the counter is down to half. The default is TX_COUNTING_BOUND:
//            0 for tx_counting, 65,536 for tx_counting_bounded, built from
//            this file.
//   --step   increments staged per handler; 0: all of them in the start
//            handler, as in Savina. A handler's sends commit together, so a
//            bound holds the burst back only between handlers: with a bound
//            the producer stages `step` (default 1,024) at a time and sends
//            itself the rest.
//
// Timed: from the start message to quiescence. Checked: the count, and
// messages + 3 messages committed (+ 1, the report to main), none rolled
// back or unmatched.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "../counting/params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

#ifndef TX_COUNTING_BOUND
#define TX_COUNTING_BOUND 0
#endif

namespace {

namespace tx = tact::tx;

struct start {};
struct more {
  std::uint64_t left;
};
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

// Stages `left` increments, `step` at most (0: all), then the retrieve, or
// a message to itself for the rest.
void stage(const tx::actor_ref& target, std::uint64_t left, std::uint64_t step) {
  const std::uint64_t now = step == 0 ? left : std::min(left, step);
  for (std::uint64_t i = 0; i < now; ++i) tx::send(target, increment{});
  if (now < left)
    tx::send(tx::self(), more{left - now});
  else
    tx::send(target, tx::self(), retrieve{});
}

tx::behaviour producer(const tx::actor_ref& target, std::uint64_t increments, std::uint64_t step,
                       const tx::actor_ref& report) {
  return {
      [target, increments, step](start) { stage(target, increments, step); },
      [target, step](more m) { stage(target, m.left, step); },
      [report](result r) { tx::send(report, r.count); },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::counting::increments(o);
  const auto bound = o.param("bound", TX_COUNTING_BOUND, TX_COUNTING_BOUND);
  suite::check(bound >= 0 && bound <= 0xffffffff, "--bound must be a 32-bit count");
  const auto step_param = o.param("step", bound != 0 ? 1024 : 0, bound != 0 ? 1024 : 0);
  suite::check(step_param >= 0, "--step must not be negative");
  const auto step = static_cast<std::uint64_t>(step_param);

  tact::actor_system system{{.workers = o.threads()}};
  std::optional<std::uint64_t> counted;
  const tx::actor_ref report = tx::spawn(system, {[&counted](std::uint64_t c) { counted = c; }});
  const tx::actor_ref target =
      bound != 0 ? tx::spawn(system, counter(0), tx::bounded{static_cast<std::uint32_t>(bound)})
                 : tx::spawn(system, counter(0), tx::mode::serialized);
  // A bound mutes the producer between its steps, which holds back its
  // next step only if that runs on the same queue: serialized.
  tx::actor_ref source =
      tx::spawn(system, producer(target, n, step, report),
                bound != 0 ? tx::mode::serialized : tx::mode::parallel);
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    tx::send(source, start{});
    system.await_quiescence();
  });

  // Savina's messages, and the producer's messages to itself between steps.
  const std::uint64_t steps = step == 0 ? 1 : std::max<std::uint64_t>(1, (n + step - 1) / step);
  const std::uint64_t messages = suite::counting::messages(n) + steps - 1;
  suite::check(counted == n, "the counter counted " + std::to_string(counted.value_or(0)) +
                                 " of " + std::to_string(n) + " increments");
  suite::tx::check_commits(system, before, messages + 1);
  source.reset();
  system.stop();
  suite::report(o, suite::bench_name("tx_counting"), "tact", secs, messages);
}
