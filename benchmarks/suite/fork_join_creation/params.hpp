#pragma once

// The fork_join_creation workload's parameter, for both programs that run
// it (tact.cpp, which documents it, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::fork_join_creation {

// Actors created, each sent one message, at least 1 (1,500,000; --quick
// 40,000).
inline std::uint64_t actors(options& o) {
  const auto actors = o.param("actors", 1'500'000, 40'000);
  check(actors >= 1, "--actors must be at least 1");
  return static_cast<std::uint64_t>(actors);
}

}  // namespace suite::fork_join_creation
