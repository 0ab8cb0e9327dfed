// transactional fibonacci, tact: fibonacci's workload and Savina protocol
// (fibonacci/tact.cpp documents it) on transactional actors, one per call
// of the naive recursion. A request carries its customer first, (parent,
// n); an actor asked for n > 2 creates two children with tx::create, asks
// each, and becomes an adder waiting for their answers; the first answer
// becomes adder(1, value), the second sends the sum to the parent. Nobody
// keeps a reference to an actor that has answered, so it is reclaimed.
//
// Every actor is parallel-mode: the two answers of a parent may arrive on
// two workers at once, and then one adder loses the become race and runs
// again against adder(1, ...), which is what makes it add correctly. The
// root answers to main.
//
// Parameters (full / --quick): as fibonacci (--n 27 / 20).
//
// Timed: from the root's request to quiescence. Checked: fib(n), and
// 2 (2 fib(n) - 1) - 1 messages committed (+ 1, the root's answer to
// main), none rolled back or unmatched.
#include <cstdint>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "../fibonacci/params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

tx::behaviour adder(const tx::actor_ref& parent, int answered, std::int64_t sum) {
  return {[parent, answered, sum](std::int64_t value) {
    if (answered == 1)
      tx::send(parent, sum + value);
    else
      tx::become(adder(parent, 1, sum + value));
  }};
}

tx::behaviour fibonacci_actor() {
  return {[](const tx::actor_ref& parent, std::int64_t n) {
    if (n <= 2) {
      tx::send(parent, std::int64_t{1});
      return;
    }
    tx::send(tx::create(fibonacci_actor()), tx::self(), n - 1);
    tx::send(tx::create(fibonacci_actor()), tx::self(), n - 2);
    tx::become(adder(parent, 0, 0));
  }};
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::int64_t n = suite::fibonacci::index(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::optional<std::int64_t> result;
  const tx::actor_ref report = tx::spawn(system, {[&result](std::int64_t r) { result = r; }});
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    tx::send(tx::spawn(system, fibonacci_actor()), report, n);
    system.await_quiescence();
  });

  const std::int64_t expected = suite::fibonacci::fibonacci(n);
  suite::check(result == expected, "fib(" + std::to_string(n) + ") came out as " +
                                       std::to_string(result.value_or(0)) + ", not " +
                                       std::to_string(expected));
  const std::uint64_t messages = suite::fibonacci::messages(n);
  suite::tx::check_commits(system, before, messages + 1);
  system.stop();
  suite::report(o, "tx_fibonacci", "tact", secs, messages);
}
