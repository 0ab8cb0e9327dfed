#pragma once

#include <array>
#include <chrono>
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
  // Batches begun: a queue's mailbox gulped, or a queue claimed (see
  // claims), whose batch may hold only local sends; and mailboxes taken
  // into the batch in hand by a worker running alone (docs/design.md,
  // "Kept queues").
  std::uint64_t gulps = 0;
  // Messages taken from mailboxes by gulps. An envelope run came into its
  // batch one way, counted once: gulped, or a local send.
  std::uint64_t gulped_messages = 0;
  std::uint64_t missed_gulps = 0;     // queue found being processed elsewhere
  std::uint64_t steal_attempts = 0;   // victims scanned by this worker as a thief
  std::uint64_t steal_no_candidate = 0;  // ... that had no queue worth taking
  std::uint64_t steal_failed_swaps = 0;  // ... where the swap lost a race
  std::uint64_t steals = 0;              // queues taken
  // ... of which by a worker with work of its own, from one that had not
  // swept its queues for defaults::rescue_after: its thread was not
  // running (preempted), or it was in a receive that long (see
  // docs/fairness.md, "Preempted workers").
  std::uint64_t rescues = 0;
  std::uint64_t messages_stolen = 0;     // messages queued in them when taken
  std::uint64_t parks = 0;
  std::uint64_t wakeups = 0;
  // Times the worker was stood down while message-bound work ran on fewer
  // workers (system_config::adapt_every); each is also a park.
  std::uint64_t rests = 0;
  std::uint64_t dead_letters = 0;  // sent to, or delivered after, a finished actor
  // Sends refused before they were queued: to a finished classic actor
  // (also dead letters), to an empty transactional reference (also
  // tx_dropped), or to a stopping system (also dead letters).
  std::uint64_t messages_rejected = 0;
  // Envelopes still queued when the system stopped, or when a sponsor was
  // destroyed: dropped without running (reported as never received).
  std::uint64_t messages_discarded = 0;
  std::uint64_t suspensions = 0;   // behaviours suspended while they waited (an ask)
  std::uint64_t resumptions = 0;   // ... and resumed once their wait was over
  // Fibers made, each with its own stack, for behaviours that wait; kept
  // and reused, so this grows with how many wait at once, not how often.
  std::uint64_t fibers_made = 0;
  // Batches cut short, the rest left for the queue's next gulp: at the
  // gulp budget (system_config::gulp_budget, see docs/fairness.md), at a
  // sponsor's run budget, or by a helping asker once answered or out of
  // time (see docs/ask.md, "The helping asker").
  std::uint64_t batches_given_back = 0;
  // Queues a worker claimed: a send from its batch found the receiver's
  // queue idle, or kept by this worker since its last batch, and the
  // worker ran that queue next itself instead of waking its owner (see
  // docs/design.md, "Claims" and "Kept queues"). Each is also a gulp; a
  // claim of a kept queue without its lock is also a local send.
  std::uint64_t claims = 0;
  // Work that found no memory where the engine cannot fail, and waited
  // for it: a commit's send kept, a timer's firing put back, a waiting
  // actor's message left in place (see docs/concepts.md, "When something
  // goes wrong"). Nothing was lost. In totals only.
  std::uint64_t memory_waits = 0;
  // Sends to a classic actor whose mailbox was full (see
  // docs/flow_control.md): the sender waited for room; the send went
  // through without waiting (the sender could not wait, or must not); the
  // message was dropped by an overflow::drop bound (also
  // messages_rejected).
  std::uint64_t sends_waited = 0;
  std::uint64_t sends_over_bound = 0;
  std::uint64_t sends_dropped = 0;
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

  // Messages taken from mailboxes per batch begun.
  double average_gulp_size() const noexcept {
    return gulps == 0 ? 0.0 : static_cast<double>(gulped_messages) / static_cast<double>(gulps);
  }
  double average_steal_size() const noexcept {
    return steals == 0 ? 0.0 : static_cast<double>(messages_stolen) / static_cast<double>(steals);
  }
  // Per counter. A difference is meaningful between two readings of the
  // same counters, the later one first (see system_stats).
  worker_stats& operator+=(const worker_stats& other) noexcept;
  worker_stats& operator-=(const worker_stats& other) noexcept;
};

// Every counter of worker_stats, once each, for code that treats them
// alike: sums, differences, export.
inline constexpr std::array worker_stats_counters{
    &worker_stats::actors_created,     &worker_stats::actors_finished,
    &worker_stats::messages_sent,      &worker_stats::local_sends,
    &worker_stats::messages_processed, &worker_stats::gulps,
    &worker_stats::gulped_messages,    &worker_stats::missed_gulps,
    &worker_stats::steal_attempts,     &worker_stats::steal_no_candidate,
    &worker_stats::steal_failed_swaps, &worker_stats::steals,
    &worker_stats::rescues,
    &worker_stats::messages_stolen,    &worker_stats::parks,
    &worker_stats::wakeups,            &worker_stats::rests,
    &worker_stats::dead_letters,
    &worker_stats::messages_rejected,  &worker_stats::messages_discarded,
    &worker_stats::suspensions,        &worker_stats::resumptions,
    &worker_stats::fibers_made,        &worker_stats::batches_given_back,
    &worker_stats::claims,
    &worker_stats::memory_waits,       &worker_stats::sends_waited,
    &worker_stats::sends_over_bound,   &worker_stats::sends_dropped,
    &worker_stats::tx_dispatches,
    &worker_stats::tx_commits,         &worker_stats::tx_becomes,
    &worker_stats::tx_collisions,      &worker_stats::tx_retries,
    &worker_stats::tx_serializations,  &worker_stats::tx_rollbacks,
    &worker_stats::tx_unmatched,       &worker_stats::tx_dropped};

inline worker_stats& worker_stats::operator+=(const worker_stats& other) noexcept {
  for (std::uint64_t worker_stats::*counter : worker_stats_counters)
    this->*counter += other.*counter;
  return *this;
}

// A counter that seems to have gone back (read by two threads with
// nothing ordering the two readings) gives 0, not a wrapped number.
inline worker_stats& worker_stats::operator-=(const worker_stats& other) noexcept {
  for (std::uint64_t worker_stats::*counter : worker_stats_counters)
    this->*counter = this->*counter > other.*counter ? this->*counter - other.*counter : 0;
  return *this;
}

// What one worker is doing when a snapshot is taken: gauges, read as they
// are at that moment rather than counted.
struct worker_load {
  std::uint64_t queued = 0;     // envelopes waiting in the work queues it owns (not yet gulped)
  std::uint64_t suspended = 0;  // behaviours it runs that wait now (an ask)
  bool parked = false;          // asleep for lack of work
  // Parked because the system runs message-bound work on fewer workers
  // (system_config::adapt_every); its queues are swept by another worker.
  bool resting = false;
};

// A snapshot of the system's statistics (actor_system::stats()), or the
// difference of two (`later - earlier`): the counters count what happened
// from `since` to `taken`, the gauges say how things stood at `taken`.
// Exact when the system is quiescent or stopped; approximate (but never
// torn per counter) while it runs.
//
// The engine's counters are never reset: each worker owns its own and
// writes them without synchronization, so a reset from another thread
// would race with it. A difference from an earlier snapshot is the reset:
//
//   const tact::system_stats before = system.stats();
//   ...
//   const tact::system_stats recent = system.stats() - before;
//   recent.per_second(recent.total.messages_processed);
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
  using clock = std::chrono::steady_clock;

  // What the counters count: from the system's start (a snapshot) or from
  // the earlier snapshot (a difference), until `taken`.
  clock::time_point since{};
  clock::time_point taken{};
  worker_stats total;                 // all workers plus other threads
  std::vector<worker_stats> workers;  // per worker, in worker order
  // Gauges at `taken`; a difference keeps the later snapshot's.
  std::vector<worker_load> load;  // per worker, in worker order
  std::uint64_t queued = 0;       // envelopes waiting in every work queue, sponsors' included
  std::uint64_t suspended = 0;    // behaviours that wait now, on any thread
  std::uint64_t live_actors = 0;  // classic actors made and not finished yet

  std::chrono::duration<double> interval() const noexcept { return taken - since; }
  // `count` (one of the counters above) per second of interval(); 0 for
  // an empty interval.
  double per_second(std::uint64_t count) const noexcept {
    const double seconds = interval().count();
    return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
  }
};

// What happened between two snapshots of one system: each counter's
// difference, in total and per worker, over [earlier.taken, later.taken],
// with the gauges of `later`. Throws std::invalid_argument unless both
// count from the same start (two snapshots of one system, or two
// differences from one snapshot) and `earlier` was taken first.
TACT_API system_stats operator-(const system_stats& later, const system_stats& earlier);

TACT_API std::ostream& operator<<(std::ostream& out, const worker_stats& s);
TACT_API std::ostream& operator<<(std::ostream& out, const system_stats& s);

}  // namespace tact
