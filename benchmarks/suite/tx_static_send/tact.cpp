// transactional static send, tact: static_send's workload on a
// transactional actor. One parallel-mode actor re-sends to itself the
// count of messages it has handled, tx::send(tx::self(), i + 1), until it
// has handled `messages`, then tells main. Each send makes a message (a
// transactional message is an immutable value), and each dispatch runs a
// handler and commits its staged send; there is no become, so no
// compare-and-swap. Compare its ns/msg with static_send's (the same
// workload on a classic actor, which re-sends one preallocated message)
// in one run: the brief asks for a transactional send and dispatch within
// 2x of a classic one.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   messages   sends in the run, at least 1      20,000,000   200,000
//
// Timed: from the first send until the system is quiescent again. Checked:
// the last message counted `messages`, and exactly `messages` + 1 handlers
// committed (the chain and the report to main), none rolled back.
#include <cstdint>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "../static_send/params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

// Handles message i by sending itself i + 1, up to `limit`; reports the
// last count to `done`.
tx::behaviour echo(std::uint64_t limit, const tx::actor_ref& done) {
  return {[limit, done](std::uint64_t i) {
    if (i < limit)
      tx::send(tx::self(), i + 1);
    else
      tx::send(done, i);
  }};
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t messages = suite::static_send::messages(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::optional<std::uint64_t> received;
  tx::actor_ref target = tx::spawn(
      system, echo(messages, tx::spawn(system, {[&received](std::uint64_t n) { received = n; }})));
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    tx::send(target, std::uint64_t{1});
    system.await_quiescence();
  });

  suite::check(received == messages, "the actor handled " + std::to_string(received.value_or(0)) +
                                          " of " + std::to_string(messages) + " messages");
  suite::tx::check_commits(system, before, messages + 1);
  target.reset();
  system.stop();
  suite::report(o, "tx_static_send", "tact", secs, messages);
}
