#pragma once

// The sieve workload's parameters, for both programs that run it (tact.cpp,
// which documents the protocol, and caf.cpp); expect.hpp holds what they
// must end with.
#include <cstdint>

#include "suite.hpp"

namespace suite::sieve {

struct params {
  std::int64_t limit;              // at least 3 (300,000; --quick 80,000)
  std::int64_t primes_per_filter;  // at least 1 (1,000; --quick 1,000)
};

inline params read(options& o) {
  const params p{.limit = o.param("limit", 300'000, 80'000),
                 .primes_per_filter = o.param("primes_per_filter", 1'000, 1'000)};
  check(p.limit >= 3 && p.primes_per_filter >= 1,
        "--limit must be at least 3, --primes_per_filter at least 1");
  return p;
}

}  // namespace suite::sieve
