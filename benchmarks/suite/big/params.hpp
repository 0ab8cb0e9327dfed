#pragma once

// The big workload's parameters and message count, for both programs that
// run it (tact.cpp, which documents the protocol, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::big {

struct params {
  std::int64_t actors;  // 1..1,000,000 (360; --quick 120)
  std::int64_t pings;   // per actor, not negative (5,000; --quick 500)
};

inline params read(options& o) {
  const params p{.actors = o.param("actors", 360, 120), .pings = o.param("pings", 5'000, 500)};
  check(p.actors >= 1 && p.actors <= 1'000'000 && p.pings >= 0,
        "--actors must be between 1 and 1,000,000, --pings not negative");
  return p;
}

// 2 actors pings (Ping and Pong) + 4 actors + 1 (tact.cpp tells them apart).
inline std::uint64_t messages(const params& p) {
  const auto w = static_cast<std::uint64_t>(p.actors);
  return 2 * w * static_cast<std::uint64_t>(p.pings) + 4 * w + 1;
}

}  // namespace suite::big
