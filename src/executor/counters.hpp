#pragma once

#include <atomic>
#include <cstdint>

#include <tact/stats.hpp>

namespace tact::detail {

// A statistic with a single writer. Incremented with a plain load and
// store (no read-modify-write, no lock prefix); atomic only so that other
// threads may read it while it changes without a data race.
class counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// One worker's statistics (see tact::worker_stats), written by that worker.
struct worker_counters {
  counter actors_created;
  counter actors_finished;
  counter messages_sent;
  counter local_sends;
  counter messages_processed;
  counter gulps;
  counter gulped_messages;
  counter missed_gulps;
  counter steal_attempts;
  counter steal_no_candidate;
  counter steal_failed_swaps;
  counter steals;
  counter messages_stolen;
  counter parks;
  counter wakeups;
  counter dead_letters;

  worker_stats snapshot() const noexcept {
    return {.actors_created = actors_created.get(),
            .actors_finished = actors_finished.get(),
            .messages_sent = messages_sent.get(),
            .local_sends = local_sends.get(),
            .messages_processed = messages_processed.get(),
            .gulps = gulps.get(),
            .gulped_messages = gulped_messages.get(),
            .missed_gulps = missed_gulps.get(),
            .steal_attempts = steal_attempts.get(),
            .steal_no_candidate = steal_no_candidate.get(),
            .steal_failed_swaps = steal_failed_swaps.get(),
            .steals = steals.get(),
            .messages_stolen = messages_stolen.get(),
            .parks = parks.get(),
            .wakeups = wakeups.get(),
            .dead_letters = dead_letters.get()};
  }
};

}  // namespace tact::detail
