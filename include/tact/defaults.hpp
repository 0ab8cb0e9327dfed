#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tact/steal_policy.hpp>

// Every default of the engine, named in one place. system_config refers to
// these; docs/configuration.md explains each one.
namespace tact::defaults {

// Work queues per worker when the configuration does not say (the Cforall thesis: 16).
// A system with one worker gets one queue: there is nobody to contend with.
inline constexpr std::uint32_t queues_per_worker = 16;

// Sponsors (threads outside the pool that run chosen actors: the calling
// thread, a dedicated thread, a GUI loop) one system can have at once,
// unless system_config::sponsors says otherwise. Each reserves a work
// queue that no worker processes.
inline constexpr std::uint32_t sponsors = 16;

// A copy queue's first chunk, in envelopes (24 bytes each), and the smallest
// it keeps. Queues allocate it on first use; chunks added as a queue grows
// double from it, and reclamation never shrinks below it.
inline constexpr std::uint32_t copy_queue_floor = 16;

// The most messages of one transactional commit's consecutive sends to
// one serialized actor that go as one queue entry, a run (see
// docs/transactional.md): a run holds its worker for as long as its
// messages take, since the gulp budget is looked at between entries, so
// a turn overshoots its budget by up to this many messages. Beyond a few
// dozen the queue memory a run saves (24 bytes per message otherwise)
// is already next to nothing.
inline constexpr std::uint32_t tx_run_most = 64;

// The most messages a worker keeps in its stack of messages to new actors
// (docs/design.md, "Depth first"): a send to an actor that has nothing
// waiting anywhere, on a queue the worker holds, runs next, before the
// rest of the batch, so a tree of actors made inside behaviours unfolds
// depth first and only one path of it is alive at a time. A turn whose
// budget is spent runs what the stack holds before it ends, so it
// overshoots its budget by up to this many messages; a tree deeper than
// this unfolds breadth first below that depth.
inline constexpr std::uint32_t stack_most = 64;

// Sends a worker may append straight to the batch it is processing when the
// receiver lives on that same queue, per gulp, before further such sends go
// through the mailbox again. Bounds how long one queue can hold its worker.
inline constexpr std::uint32_t local_batch = 256;

// How long a worker runs one gulp of a queue before it leaves the rest
// for the queue's next turn and lets its other queues have theirs: a
// flood into one queue delays the others by about this long per turn,
// rather than by the whole flood. Time, not a message count: a queue of
// producers, each message of which sends a thousand, would otherwise get
// as many turns as the queue of their consumer and outrun it without
// bound. The clock is read after a batch's first message, and then as
// often as the time messages take so far says it must be (at least once
// per gulp_clock_every messages), so a turn overshoots its budget by
// about one message.
inline constexpr std::chrono::microseconds gulp_budget{100};
inline constexpr std::uint32_t gulp_clock_every = 64;

// Queues a worker claimed (sent to while nobody processed them, see
// docs/design.md, "Claims") that it runs in a row before it looks at its
// own queues again: a conversation that stays on one worker gives the
// worker's other queues a turn at least this often.
inline constexpr std::uint32_t claims_drained = 16;
// Only a batch of at most this many envelopes claims: a conversation's
// batches hold one or two, and a long batch is a busy queue's, whose
// worker would claim queues only to gulp them in smaller batches than its
// sweep does (big at two workers, many-to-many: a third slower claiming
// from any batch).
inline constexpr std::uint32_t claim_batch_most = 8;

// Sends of one batch that a claimed queue's batch takes before the claim
// goes back to the queue's worker: a conversation sends one or two per
// hop, a burst many, and a burst's consumer should run beside it.
inline constexpr std::uint32_t claim_joins = 16;

// How far merges alone may carry a batch that takes other queues' sends
// (docs/design.md, "Kept queues") between two readings of its size,
// which turn merging off at claim_joins: a flood is seen by then, a few
// dozen envelopes late beside the thousands it sends, while a
// conversation, one or two envelopes at a time, reads it once per 63
// merges instead of once per 15 (a tenth of thread_ring's time at two
// workers).
inline constexpr std::uint32_t merge_reading_reach = 4 * claim_joins;

// The longest batch that a worker running alone (the governor stood the
// others down) lets other queues' messages join (docs/design.md, "Kept
// queues"): such a batch cannot be cut short at the gulp budget, only
// stop taking more. The worker takes fewer where its messages cost more:
// as many as the gulp budget fits at the cost it last measured, so a
// turn overshoots its budget by about one budget (4,096 is a few tens of
// microseconds of small messages).
inline constexpr std::uint32_t solo_batch_most = 4096;

// Empty sweeps over its queues a worker spins (with a pause instruction)
// and then yields, before it parks until a send wakes it: the most it
// spins, for each worker learns how much of it pays (docs/design.md, "How
// long an idle worker spins"), and it yields only after a whole spin.
inline constexpr std::uint32_t idle_spins = 2000;
inline constexpr std::uint32_t idle_yields = 16;
// Empty sweeps after which an idle worker is hungry: it gets the oldest
// message of a parallel transactional actor waiting on another worker's
// stack, the root of the largest subtree there, a share of the work.
// Fewer sweeps than that are a lull, which would only move work about.
inline constexpr std::uint32_t hungry_after = 4;

// Whom an idle worker tries to steal from (see steal_policy). Chosen by the
// balance, executor and repeat benchmarks (docs/performance.md).
inline constexpr steal_policy steal = steal_policy::random;

// An idle worker's first steal attempt comes after this many empty sweeps
// of its own queues, and each failed one doubles the gap to the next, up
// to the longest; only a successful steal brings the gap back down, and
// the next attempt then comes at the first empty sweep. A
// thief reads its victim's queue headers, which costs the victim's senders
// a cache miss each: one attempt every other sweep (the thesis's rhythm)
// slowed a chain of actors hopping between two workers by a quarter, and
// a gap that restarted whenever the thief got work of its own made
// thread_ring three times slower at two workers.
inline constexpr std::uint64_t steal_after = 64;
inline constexpr std::uint64_t steal_gap_longest = 1024;

// A queue with mail, and no other mail on its worker, is left to that
// worker unless it has not started a sweep of its queues for this long:
// it is stuck in a long receive, or its thread is not running (the OS
// preempted it on a machine busy with other work). Then a thief takes it.
// A running worker with nothing to do sweeps every few nanoseconds.
// Shorter steals more eagerly from workers about to get to it; longer
// leaves mail waiting for a preempted thread while other workers idle.
inline constexpr std::chrono::microseconds stuck_worker{20};

// A worker with work of its own takes the waiting queues of another
// worker that has not started a sweep for this long (see
// docs/fairness.md, "Preempted workers"): far longer than a queue's turn
// (gulp_budget), so a worker still for that long is not running, or is
// in a receive that long. It looks at most four times per period (and at
// least every sixteen sweeps or 256 messages), so mail waits about one to
// two periods for a thread the OS has descheduled, rather than for the
// OS to run it again.
inline constexpr std::chrono::microseconds rescue_after{1'000};

// How often the executor weighs how many workers should run
// (system_config::adapt_every): an epoch of its governor (see
// docs/design.md, "Fewer workers for message-bound work"); 0 turns it
// off. Shorter follows changes of the work sooner; each try of another
// count costs two to four epochs at that count, once per 512 epochs at
// most on a steady load. Long enough that an epoch holds thousands of
// messages, so that its rate says something.
inline constexpr std::chrono::microseconds adapt_every{1'000};

// While some workers are busy, one parked worker wakes now and then to look
// for queues stranded behind a busy worker (one blocked in a long
// receive, say): first after this long, then twice as long each time it
// finds nothing, up to the maximum. A fully idle system sleeps for good.
inline constexpr std::chrono::microseconds watch_first{500};
inline constexpr std::chrono::microseconds watch_longest{20'000};

// Stack of each fiber a worker makes for behaviours that wait (an ask
// inside a behaviour, see docs/ask.md), in bytes, guard page included.
// A behaviour that waits, and whatever runs on the worker while it does,
// may run on such a stack: deep recursion in a behaviour needs more. Pages
// are touched only as used.
inline constexpr std::size_t fiber_stack_size = 256 * 1024;
// Fibers (with their stacks) a worker or a guest keeps for reuse once the
// behaviours that waited on them are done: a worker ends the rest when it
// parks, a guest when it is released, so that a burst of waiting
// behaviours does not hold its memory and mappings for good.
inline constexpr std::size_t fibers_kept = 32;
// The smallest stack system_config::fiber_stack_size accepts.
inline constexpr std::size_t fiber_stack_minimum = 32 * 1024;

// A transactional message whose become loses this many races in a row
// (another invocation of the same actor committed first) switches its actor
// to serialized: its messages then run one at a time, on its home queue.
// Any limit bounds a message's retries; this one decides when running in
// parallel stops paying. Races lost by chance seldom come 32 in a row (at
// two workers, a message that loses half its races does so once in 2^32),
// while a handler that is slow beside the other workers' commits loses
// every race and reaches 32 within microseconds. At 8, tx_counter's
// counter, serialized by a streak in its first milliseconds at two
// workers, took 1.6 to 1.8 times its one-worker time; at 32 it stays
// parallel and takes 1.05 to 1.09 (docs/performance.md, "A longer
// collision limit").
inline constexpr std::uint32_t collision_limit = 32;
// The mailbox bound an actor gets once collisions serialize it: its
// messages then all run on one worker, which senders on every other worker
// can outrun, and a sender that commits to it full is muted as for a
// tx::bounded actor (docs/flow_control.md). About 1.5 MB of envelopes
// at most, against the 75 to 111 MB tx_counter's counter queued without.
inline constexpr std::uint32_t collision_bound = 65'536;

// Work the engine could not queue for lack of memory where nothing may fail
// (a commit's sends, a timer's firing: see stats memory_waits) waits and is
// tried again this often, until memory comes back.
inline constexpr std::chrono::milliseconds memory_retry{1};

// Where a metrics_exposer (tact-metrics) listens, and the path it serves:
// the loopback address, so that statistics leave the machine only when a
// configuration says so.
inline constexpr std::string_view metrics_address = "127.0.0.1:9464";
inline constexpr std::string_view metrics_path = "/metrics";

// What decoding one value from the wire may take (tact::net::decode_limits):
// records and containers nested this deep, and this much memory for the
// decoded value's strings, vectors and maps, whatever the input claims.
inline constexpr std::uint32_t wire_depth = 32;
inline constexpr std::size_t wire_allocation = std::size_t{64} << 20;

}  // namespace tact::defaults
