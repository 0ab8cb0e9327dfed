#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/defaults.hpp>

#include "executor/fibers.hpp"
#include "executor/held_queue.hpp"
#include "executor/runner.hpp"

namespace tact::detail {

// A runner's behaviours that wait: the contexts they wait on, their
// conditions, the queues they hold (see suspension.cpp). Only the runner's
// thread touches it. Private to the runner, so that nothing else sees
// Boost.Context.
struct runner::suspensions {
  suspensions(std::size_t stack_size, runner& owner)
      : fibers{stack_size, defaults::fibers_kept, &runner::loop_of, &owner} {}

  fiber_pool fibers;
  std::vector<suspended_behaviour*> suspended;
  std::vector<std::unique_ptr<held_queue>> held;
  std::vector<std::unique_ptr<held_queue>> spare_held;  // released, kept for reuse
  // resume_ready() reads the clock on every deadline_polls-th call, and
  // looks at no more than scan_limit behaviours per call, going round
  // from where it stopped (see there).
  static constexpr std::uint32_t deadline_polls = 64;
  static constexpr std::size_t scan_limit = 32;
  std::uint32_t polls_to_deadlines = deadline_polls;
  std::chrono::steady_clock::time_point clock = std::chrono::steady_clock::time_point::min();
  std::size_t cursor = 0;  // where the next look starts in `suspended`
  // A held queue's drain found no memory to set a message aside, and has
  // not managed since: wait() wakes within defaults::memory_retry to try
  // again (see drain_held).
  bool stash_starved = false;

  held_queue* find_held(const work_queue& q) noexcept {
    for (const std::unique_ptr<held_queue>& h : held)
      if (h->queue == &q) return h.get();
    return nullptr;
  }
};

// A behaviour suspended here; lives on the suspended context's stack.
struct runner::suspended_behaviour {
  wake_condition* condition;
  fiber_pool::context* context;
};

}  // namespace tact::detail
