#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include <tact/export.hpp>

namespace tact {

// Counters one worker keeps as plain per-thread integers (no shared cache
// line, no atomic read-modify-write); summed when asked for.
struct worker_stats {
  std::uint64_t actors_created = 0;
  std::uint64_t actors_finished = 0;
  std::uint64_t messages_sent = 0;  // including sends from other threads (in totals)
  std::uint64_t local_sends = 0;    // of which appended to the batch in progress
  // Envelopes run, poison pills and behaviours that threw included.
  std::uint64_t messages_processed = 0;
  std::uint64_t gulps = 0;
  std::uint64_t gulped_messages = 0;  // messages taken by gulps
  std::uint64_t missed_gulps = 0;     // queue found being processed elsewhere
  std::uint64_t steal_attempts = 0;   // victims scanned by this worker as a thief
  std::uint64_t steal_no_candidate = 0;  // ... that had no queue worth taking
  std::uint64_t steal_failed_swaps = 0;  // ... where the swap lost a race
  std::uint64_t steals = 0;              // queues taken
  std::uint64_t messages_stolen = 0;     // messages queued in them when taken
  std::uint64_t parks = 0;
  std::uint64_t wakeups = 0;
  std::uint64_t dead_letters = 0;  // sent to, or delivered after, a finished actor
  // Sends refused before they were queued: to a finished classic actor
  // (also dead letters), to an empty transactional reference (also
  // tx_dropped), or to a stopping system (also dead letters).
  std::uint64_t messages_rejected = 0;
  // Envelopes still queued when the system stopped, or when a sponsor was
  // destroyed: dropped without running (reported as never received).
  std::uint64_t messages_discarded = 0;
  std::uint64_t suspensions = 0;   // behaviours suspended while they waited (an ask)
  // Fibers made, each with its own stack, for behaviours that wait; kept
  // and reused, so this grows with how many wait at once, not how often.
  std::uint64_t fibers_made = 0;
  // Batches a helping asker cut short once answered or out of time, the
  // rest given back to their queue (see docs/ask.md, "The helping asker").
  std::uint64_t batches_given_back = 0;
  // Work that found no memory where the engine cannot fail, and waited
  // for it: a commit's send kept, a timer's firing put back, a waiting
  // actor's message left in place (see docs/concepts.md, "When something
  // goes wrong"). Nothing was lost. In totals only.
  std::uint64_t memory_waits = 0;
  // Transactional actors.
  std::uint64_t tx_dispatches = 0;       // transactional envelopes run (a forward to a home queue runs twice)
  std::uint64_t tx_commits = 0;          // handlers that committed
  std::uint64_t tx_becomes = 0;          // ... of which with a become
  std::uint64_t tx_collisions = 0;       // becomes that lost the compare-and-swap
  std::uint64_t tx_retries = 0;          // handlers run again after a collision
  std::uint64_t tx_serializations = 0;   // actors switched to serialized by collisions
  std::uint64_t tx_rollbacks = 0;        // handlers that threw: nothing they staged happened
  std::uint64_t tx_unmatched = 0;        // messages no handler matched (dropped)
  std::uint64_t tx_dropped = 0;          // transactional sends to an empty reference (dropped)

  double average_gulp_size() const noexcept {
    return gulps == 0 ? 0.0 : static_cast<double>(gulped_messages) / static_cast<double>(gulps);
  }
  double average_steal_size() const noexcept {
    return steals == 0 ? 0.0 : static_cast<double>(messages_stolen) / static_cast<double>(steals);
  }
  worker_stats& operator+=(const worker_stats& other) noexcept {
    actors_created += other.actors_created;
    actors_finished += other.actors_finished;
    messages_sent += other.messages_sent;
    local_sends += other.local_sends;
    messages_processed += other.messages_processed;
    gulps += other.gulps;
    gulped_messages += other.gulped_messages;
    missed_gulps += other.missed_gulps;
    steal_attempts += other.steal_attempts;
    steal_no_candidate += other.steal_no_candidate;
    steal_failed_swaps += other.steal_failed_swaps;
    steals += other.steals;
    messages_stolen += other.messages_stolen;
    parks += other.parks;
    wakeups += other.wakeups;
    dead_letters += other.dead_letters;
    messages_rejected += other.messages_rejected;
    messages_discarded += other.messages_discarded;
    suspensions += other.suspensions;
    fibers_made += other.fibers_made;
    batches_given_back += other.batches_given_back;
    memory_waits += other.memory_waits;
    tx_dispatches += other.tx_dispatches;
    tx_commits += other.tx_commits;
    tx_becomes += other.tx_becomes;
    tx_collisions += other.tx_collisions;
    tx_retries += other.tx_retries;
    tx_serializations += other.tx_serializations;
    tx_rollbacks += other.tx_rollbacks;
    tx_unmatched += other.tx_unmatched;
    tx_dropped += other.tx_dropped;
    return *this;
  }
};

// A snapshot of the system's statistics. Exact when the system is quiescent
// or stopped; approximate (but never torn per counter) while it runs.
//
// Conservation: a send is refused (messages_rejected) or queued
// (messages_sent), and a queued envelope either runs once
// (messages_processed: received, or dropped at delivery as a dead letter,
// unmatched or rolled back) or is discarded by stop() (messages_discarded).
// So once the system is quiescent or stopped,
//
//   messages_sent == messages_processed + messages_discarded,
//
// and the program made messages_sent + messages_rejected sends. Sponsors'
// queues are outside quiescence: for them it holds once they are drained
// or destroyed.
struct system_stats {
  worker_stats total;                 // all workers plus other threads
  std::vector<worker_stats> workers;  // per worker, in worker order
};

TACT_API std::ostream& operator<<(std::ostream& out, const worker_stats& s);
TACT_API std::ostream& operator<<(std::ostream& out, const system_stats& s);

}  // namespace tact
