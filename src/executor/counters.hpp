#pragma once

#include <tact/stats.hpp>

#include "support/counter.hpp"

namespace tact::detail {

// One runner's statistics (see tact::worker_stats), written only on its
// thread; the actor models keep their own (the transactional model's tx_*).
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
  counter rescues;
  counter messages_stolen;
  counter parks;
  counter wakeups;
  counter rests;
  counter dead_letters;
  counter messages_rejected;
  counter messages_discarded;
  counter suspensions;
  counter resumptions;
  counter fibers_made;
  counter batches_given_back;
  counter claims;
  counter sends_waited;
  counter sends_over_bound;
  counter sends_dropped;

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
            .rescues = rescues.get(),
            .messages_stolen = messages_stolen.get(),
            .parks = parks.get(),
            .wakeups = wakeups.get(),
            .rests = rests.get(),
            .dead_letters = dead_letters.get(),
            .messages_rejected = messages_rejected.get(),
            .messages_discarded = messages_discarded.get(),
            .suspensions = suspensions.get(),
            .resumptions = resumptions.get(),
            .fibers_made = fibers_made.get(),
            .batches_given_back = batches_given_back.get(),
            .claims = claims.get(),
            .sends_waited = sends_waited.get(),
            .sends_over_bound = sends_over_bound.get(),
            .sends_dropped = sends_dropped.get()};
  }
};

}  // namespace tact::detail
