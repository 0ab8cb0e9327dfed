#pragma once

// The bursts workload's parameters and message count, for both programs
// that run it (tact.cpp, which documents the protocol, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::bursts {

struct params {
  std::int64_t actors;   // in the ring, at least 1 (100; --quick 100)
  std::int64_t hops;     // of the token per burst, at least 1 (100,000; --quick 20,000)
  std::int64_t bursts;   // at least 1 (40; --quick 5)
  std::int64_t idle_us;  // between two bursts, not negative (5,000; --quick 5,000)
};

inline params read(options& o) {
  const params p{.actors = o.param("actors", 100, 100),
                 .hops = o.param("hops", 100'000, 20'000),
                 .bursts = o.param("bursts", 40, 5),
                 .idle_us = o.param("idle_us", 5'000, 5'000)};
  check(p.actors >= 1 && p.hops >= 1 && p.bursts >= 1 && p.idle_us >= 0,
        "--actors, --hops and --bursts must be at least 1, --idle_us not negative");
  return p;
}

// actors Data + bursts × hops Ping + actors Exit.
inline std::uint64_t messages(const params& p) {
  return static_cast<std::uint64_t>(2 * p.actors + p.bursts * p.hops);
}

}  // namespace suite::bursts
