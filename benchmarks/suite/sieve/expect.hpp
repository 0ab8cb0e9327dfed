#pragma once

// What both sieve programs must find, computed once for both engines.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace suite::sieve {

// The expected outcome, from a plain sieve of Eratosthenes: the primes
// below limit, and the messages the pipeline delivers.
struct expectation {
  std::int64_t primes = 0;
  std::uint64_t messages = 0;
};

inline expectation expect(std::int64_t limit, std::int64_t per_filter) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(limit, 2));
  std::vector<std::int64_t> smallest_factor(n, 0);
  std::vector<std::int64_t> index(n, -1);  // of each prime, in order, from 2 = 0
  std::int64_t primes = 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (smallest_factor[i] != 0) continue;
    index[i] = primes++;
    for (std::size_t j = i; j < n; j += i)
      if (smallest_factor[j] == 0) smallest_factor[j] = static_cast<std::int64_t>(i);
  }
  expectation e{primes, 1};
  for (std::size_t c = 3; c < n; c += 2) {
    const std::int64_t f = smallest_factor[c];
    // A composite goes as far as the filter holding its smallest factor; a
    // prime through every filter there is, the last holding prime index-1.
    const std::int64_t last_filter = f != static_cast<std::int64_t>(c)
                                         ? index[static_cast<std::size_t>(f)] / per_filter
                                         : (index[c] - 1) / per_filter;
    e.messages += static_cast<std::uint64_t>(last_filter + 1);
  }
  e.messages += static_cast<std::uint64_t>((primes - 1) / per_filter + 1);  // Exit
  return e;
}

}  // namespace suite::sieve
