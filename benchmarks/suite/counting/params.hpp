#pragma once

// The counting workload's parameter and message count, for every program
// that runs it (counting on classic actors and on CAF, tx_counting on
// transactional actors); counting/tact.cpp documents the protocol.
#include <cstdint>

#include "suite.hpp"

namespace suite::counting {

// Increments the producer sends (10,000,000; --quick 500,000).
inline std::uint64_t increments(options& o) {
  const auto messages = o.param("messages", 10'000'000, 500'000);
  check(messages >= 0, "--messages must not be negative");
  return static_cast<std::uint64_t>(messages);
}

// 1 start + n Increment + 1 Retrieve + 1 Result.
inline std::uint64_t messages(std::uint64_t increments) { return increments + 3; }

}  // namespace suite::counting
