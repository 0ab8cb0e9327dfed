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
  counter messages_rejected;
  counter messages_discarded;
  counter suspensions;
  counter fibers_made;
  counter tx_dispatches;
  counter tx_commits;
  counter tx_becomes;
  counter tx_collisions;
  counter tx_retries;
  counter tx_serializations;
  counter tx_rollbacks;
  counter tx_unmatched;
  counter tx_dropped;

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
            .dead_letters = dead_letters.get(),
            .messages_rejected = messages_rejected.get(),
            .messages_discarded = messages_discarded.get(),
            .suspensions = suspensions.get(),
            .fibers_made = fibers_made.get(),
            .tx_dispatches = tx_dispatches.get(),
            .tx_commits = tx_commits.get(),
            .tx_becomes = tx_becomes.get(),
            .tx_collisions = tx_collisions.get(),
            .tx_retries = tx_retries.get(),
            .tx_serializations = tx_serializations.get(),
            .tx_rollbacks = tx_rollbacks.get(),
            .tx_unmatched = tx_unmatched.get(),
            .tx_dropped = tx_dropped.get()};
  }
};

}  // namespace tact::detail
