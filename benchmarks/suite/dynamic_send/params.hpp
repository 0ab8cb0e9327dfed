#pragma once

// The dynamic_send workload's parameter, for both programs that run it
// (tact.cpp, which documents it, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::dynamic_send {

// Actors in the chain, at least 1 (2,000,000; --quick 50,000): each
// receives one hop, so also the messages delivered.
inline std::uint64_t actors(options& o) {
  const std::int64_t actors = o.param("actors", 2'000'000, 50'000);
  check(actors >= 1, "actors must be at least 1");
  return static_cast<std::uint64_t>(actors);
}

}  // namespace suite::dynamic_send
