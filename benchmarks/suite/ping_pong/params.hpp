#pragma once

// The ping_pong workload's parameter and message count, for every program
// that runs it (ping_pong on classic actors and on CAF, tx_ping_pong on
// transactional actors); ping_pong/tact.cpp documents the protocol.
#include <cstdint>

#include "suite.hpp"

namespace suite::ping_pong {

// Round trips, at least 1 (2,000,000; --quick 100,000).
inline std::uint64_t pings(options& o) {
  const auto pings = o.param("pings", 2'000'000, 100'000);
  check(pings >= 1, "--pings must be at least 1");
  return static_cast<std::uint64_t>(pings);
}

// 1 start + pings SendPing + pings SendPong + (pings - 1) Ping + 1 Stop.
inline std::uint64_t messages(std::uint64_t pings) { return 3 * pings + 1; }

}  // namespace suite::ping_pong
