#pragma once

// The thread_ring workload's parameters and message count, for both
// programs that run it (tact.cpp, which documents the protocol, and
// caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::thread_ring {

struct params {
  std::int64_t actors;  // in the ring, at least 1 (1,200; --quick 100)
  std::int64_t pings;   // not negative (5,000,000; --quick 200,000)
};

inline params read(options& o) {
  const params p{.actors = o.param("actors", 1'200, 100),
                 .pings = o.param("pings", 5'000'000, 200'000)};
  check(p.actors >= 1 && p.pings >= 0, "--actors must be at least 1, --pings not negative");
  return p;
}

// pings + 1 + 2 actors (tact.cpp tells them apart).
inline std::uint64_t messages(const params& p) {
  return static_cast<std::uint64_t>(p.pings + 1 + 2 * p.actors);
}

}  // namespace suite::thread_ring
