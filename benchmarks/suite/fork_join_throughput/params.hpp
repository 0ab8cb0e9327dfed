#pragma once

// The fork_join_throughput workload's parameters, for both programs that
// run it (tact.cpp, which documents it, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::fork_join_throughput {

struct params {
  std::int64_t actors;     // at least 1 (360; --quick 60)
  std::uint64_t messages;  // per actor, at least 1 (20,000; --quick 5,000)
};

inline params read(options& o) {
  const auto actors = o.param("actors", 360, 60);
  const auto messages = o.param("messages", 20'000, 5'000);
  check(actors >= 1 && messages >= 1, "--actors and --messages must be at least 1");
  return {.actors = actors, .messages = static_cast<std::uint64_t>(messages)};
}

}  // namespace suite::fork_join_throughput
