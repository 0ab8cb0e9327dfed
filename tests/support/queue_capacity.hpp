#pragma once

#include <cstdint>

#include <tact/actor_system.hpp>

#include "executor/executor.hpp"

namespace tact::test {

// Envelopes all the system's work queues can hold now: what their copy
// queues keep allocated.
inline std::uint64_t queue_capacity(actor_system& system) {
  detail::executor& ex = detail::executor_of(system);
  std::uint64_t total = 0;
  for (std::uint32_t q = 0; q < ex.queue_count(); ++q) total += ex.queue_at(q).capacity();
  return total;
}

}  // namespace tact::test
