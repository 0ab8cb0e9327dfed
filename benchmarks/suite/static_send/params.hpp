#pragma once

// The static send workload's one parameter, read the same way by every
// program that runs it: static_send on a classic actor and on CAF, and
// tx_static_send on a transactional actor.
#include <cstdint>

#include "suite.hpp"

namespace suite::static_send {

// Sends in the run, at least 1 (20,000,000; --quick 200,000).
inline std::uint64_t messages(options& o) {
  const std::int64_t messages = o.param("messages", 20'000'000, 200'000);
  check(messages >= 1, "messages must be at least 1");
  return static_cast<std::uint64_t>(messages);
}

}  // namespace suite::static_send
