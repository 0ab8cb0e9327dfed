// The slow computation: how many primes lie in a range, by a segmented
// sieve of Eratosthenes. Plain functions; the actors in work.hpp split the
// count into ranges and run this on the executor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

// Every prime up to and including `limit`.
inline std::vector<std::uint32_t> primes_up_to(std::uint32_t limit) {
  std::vector<bool> composite(limit + 1, false);
  std::vector<std::uint32_t> primes;
  for (std::uint64_t i = 2; i <= limit; ++i) {
    if (composite[i]) continue;
    primes.push_back(static_cast<std::uint32_t>(i));
    for (std::uint64_t j = i * i; j <= limit; j += i) composite[j] = true;
  }
  return primes;
}

// The largest r with r * r <= n.
inline std::uint32_t integer_sqrt(std::uint64_t n) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return static_cast<std::uint32_t>(r);
}

// How many primes p have lo <= p < hi, given `base`: every prime p with
// p * p < hi. Sieves a block at a time, so memory stays small.
inline std::uint64_t count_primes(std::uint64_t lo, std::uint64_t hi,
                                  const std::vector<std::uint32_t>& base) {
  constexpr std::uint64_t block = std::uint64_t{1} << 18;
  std::vector<char> composite(block);
  std::uint64_t count = 0;
  for (std::uint64_t start = std::max<std::uint64_t>(lo, 2); start < hi; start += block) {
    const std::uint64_t end = std::min(start + block, hi);
    std::fill(composite.begin(), composite.end(), 0);
    for (const std::uint64_t p : base) {
      if (p * p >= end) break;
      for (std::uint64_t j = std::max(p * p, (start + p - 1) / p * p); j < end; j += p)
        composite[j - start] = 1;
    }
    count += static_cast<std::uint64_t>(std::count(
        composite.begin(), composite.begin() + static_cast<std::ptrdiff_t>(end - start), 0));
  }
  return count;
}
