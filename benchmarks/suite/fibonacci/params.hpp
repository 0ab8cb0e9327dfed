#pragma once

// The fibonacci workload's parameter and expected outcome, for every
// program that runs it (fibonacci on classic actors and on CAF,
// tx_fibonacci on transactional actors); fibonacci/tact.cpp documents the
// protocol.
#include <cstdint>

#include "suite.hpp"

namespace suite::fibonacci {

// The index computed, 1 to 60 (27; --quick 20).
inline std::int64_t index(options& o) {
  const auto n = o.param("n", 27, 20);
  check(n >= 1 && n <= 60, "--n must be between 1 and 60");
  return n;
}

// fib(n), with fib(1) = fib(2) = 1, computed without actors.
inline std::int64_t fibonacci(std::int64_t n) {
  std::int64_t a = 1, b = 1;
  for (std::int64_t i = 2; i < n; ++i) {
    const std::int64_t c = a + b;
    a = b;
    b = c;
  }
  return b;
}

// One actor per call of the naive recursion: 2 fib(n) - 1.
inline std::uint64_t actors(std::int64_t n) { return static_cast<std::uint64_t>(2 * fibonacci(n) - 1); }

// Every actor receives one request and all but the root send one response.
inline std::uint64_t messages(std::int64_t n) { return 2 * actors(n) - 1; }

}  // namespace suite::fibonacci
