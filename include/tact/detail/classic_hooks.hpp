#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <typeinfo>

#include <tact/actor.hpp>
#include <tact/build_config.hpp>
#include <tact/detail/behaviour_local.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/export.hpp>
#include <tact/message.hpp>

// The library entry points the classic send and delivery templates call.
// Not for users.
namespace tact::detail {

// An actor's queue index once it has finished: no queue has it.
inline constexpr std::uint32_t finished_queue = std::numeric_limits<std::uint32_t>::max();

// Without checks, the queue index is read relaxed: sending to a finished
// actor is a user error, the load only has to be tear-free. With checks,
// sequentially consistent, pairing with the in-flight count (see land()).
inline constexpr std::memory_order queue_order =
    build::checks ? std::memory_order_seq_cst : std::memory_order_relaxed;

struct actor_access {
  static executor& executor_of(const actor& a) noexcept { return *a.executor_; }
  static std::uint32_t queue_of(const actor& a) noexcept { return a.queue_.load(queue_order); }
  static void mark_finished(actor& a) noexcept { a.queue_.store(finished_queue, queue_order); }
  // Checks only: a message to `a` is about to be posted.
  static void take_off(actor& a) noexcept { a.in_flight_.fetch_add(1, std::memory_order_seq_cst); }
  static void defer(actor& a, allocation how) noexcept {
    a.deferred_.store(how, std::memory_order_relaxed);
  }
  static allocation take_deferred(actor& a) noexcept {
    return a.deferred_.exchange(allocation::Nodelete, std::memory_order_acq_rel);
  }
  static std::atomic<anchor*>& anchor_slot(actor& a) noexcept { return a.anchor_; }
  // Acquire: a gauge set before the actor was shared is seen whole.
  static mailbox_gauge* gauge_of(const actor& a) noexcept {
    return a.gauge_.load(std::memory_order_acquire);
  }
  static bool land_one(actor& a) noexcept {
    return a.in_flight_.fetch_sub(1, std::memory_order_seq_cst) == 1;
  }
  // Checks only: a behaviour of `a` starts; returns how many were running
  // already (0 unless the executor broke one message at a time). Relaxed:
  // a read-modify-write sees every earlier one, and the check must add no
  // ordering that would hide a missing one from ThreadSanitizer.
  static std::uint32_t enter(actor& a) noexcept {
    return a.in_receive_.fetch_add(1, std::memory_order_relaxed);
  }
  static void leave(actor& a) noexcept { a.in_receive_.fetch_sub(1, std::memory_order_relaxed); }
  static std::atomic<std::uint8_t>& stacking(actor& a) noexcept { return a.stacking_; }
  static std::atomic<std::uint8_t>& sent_aside(actor& a) noexcept { return a.sent_aside_; }
};

// The classic delivery in progress on this thread, on the delivery's
// stack, found through behaviour_local: its message's address and, in the
// low bits the message's alignment leaves free, what the engine does with
// it once its receive returns; and its actor, the sender of what the
// behaviour sends. The allocation is read before the receive, updated by
// message::set_allocation from the receive, so that the engine never
// reads the message after the receive, when it may be its sender's again.
// Only the running behaviour calls set_allocation on the message it
// received, and the running behaviour's delivery is always the one in
// behaviour_local; a delivery clears the word when it ends, so it never
// names a finished one.
inline constexpr std::uintptr_t allocation_bits = 3;
static_assert(alignof(message) > allocation_bits &&
              std::uint8_t(allocation::Finished) <= allocation_bits);

struct delivery_record {
  std::uintptr_t message;  // address | allocation
  actor* receiver;
};

inline void begin_delivery(delivery_record& d, const message& m, actor& a) noexcept {
  d.message =
      reinterpret_cast<std::uintptr_t>(&m) | static_cast<std::uintptr_t>(m.get_allocation());
  d.receiver = &a;
  behaviour_local = reinterpret_cast<std::uintptr_t>(&d);
}
inline allocation delivery_allocation(const delivery_record& d) noexcept {
  return static_cast<allocation>(d.message & allocation_bits);
}
// The actor whose behaviour runs on this thread, or nullptr.
inline actor* running_actor() noexcept {
  const auto* d = reinterpret_cast<const delivery_record*>(behaviour_local);
  return d != nullptr ? d->receiver : nullptr;
}

struct message_access {
  static void mark_sent(message& m) noexcept { m.sent_.store(true, std::memory_order_relaxed); }
};

// A weak reference to a classic actor, for things that outlive it and must
// reach it only while it runs (a timer: the actor may return Delete while
// one is pending). It closes when the actor finishes or is destroyed,
// waiting for a holder of the lock to let go, so a holder that found it
// open may use the actor until it unlocks. Reference counted.
class anchor;
// A new reference to a's anchor, made on first use. Any thread, while the
// actor exists.
TACT_API anchor* anchor_of(actor& a);
TACT_API void release(anchor* h) noexcept;
// Locks h and returns its actor if it has not finished; else unlocks and
// returns nullptr.
TACT_API actor* lock(anchor* h) noexcept;
TACT_API void unlock(anchor* h) noexcept;
// Whether the actor has not finished. Exact on the actor's own queue (a
// delivery after the one that finished it sees false); a hint elsewhere.
TACT_API bool open(const anchor* h) noexcept;

// Posts the envelope {target, message, run} to work queue `queue` of `ex`:
// the only seam between the actor models and the executor. The three words
// travel in registers rather than through a stack copy. Any thread.
// Throws std::bad_alloc if the queue cannot grow; then nothing was posted
// (or counted).
TACT_API void post(executor& ex, std::uint32_t queue, void* target, void* message, run_fn run);

// A classic actor's two stacking bytes (see actor::stacking_ and
// docs/design.md, "Depth first"). The state is written only where the
// actor's queue is held (when a message goes on that runner's stack, and
// when a message of the actor runs while one waits there: that is the
// one, from the stack or from the batch the stack was flushed into, since
// at most one is stacked at a time and all sent after it run after it),
// so plain stores serve, ordered by the queue's hand-over. sent_aside is
// raised by whoever sends it a message another way, before posting it,
// and never goes down. A message may go on a stack only while sent_aside
// is 0 and the state takes the stack: then every message ever sent to the
// actor went on stacks and has run, and nothing for it waits anywhere.
namespace stacking {
inline constexpr std::uint8_t fresh = 0;          // its messages went on stacks and have run
inline constexpr std::uint8_t on_stack = 1;       // one of them waits on a worker's stack
inline constexpr std::uint8_t unsent = 2;         // made by a behaviour, sent nothing yet
inline constexpr std::uint8_t first_stacked = 3;  // its first message waits on a stack
inline constexpr std::uint8_t first_run = 4;      // ... and has left it
inline constexpr bool takes_stack(std::uint8_t state) noexcept {
  return state == fresh || state == unsent || state == first_run;
}
// Whether a message of the actor waits on a stack (or in the batch it was
// flushed into): the odd states, one test on every delivery.
inline constexpr bool waits(std::uint8_t state) noexcept { return (state & 1) != 0; }
static_assert(waits(on_stack) && waits(first_stacked) && !waits(fresh) && !waits(unsent) &&
              !waits(first_run));
// The state once that message runs.
inline constexpr std::uint8_t after_run(std::uint8_t state) noexcept {
  return state == first_stacked ? first_run : fresh;
}
// sent_aside: none yet, one, more (or an actor not made by a behaviour).
inline constexpr std::uint8_t aside_most = 2;
}  // namespace stacking

// A send to `receiver`, from a behaviour, of a message nothing was ever
// sent around: if the worker running it holds `queue` (or, for an actor
// sent nothing yet, may take it) and has room, the message goes on its
// stack, to run before the rest of the batch; true then. Else nothing was
// posted and the caller posts.
TACT_API bool post_on_stack(actor& receiver, std::uint32_t queue, void* target, void* message,
                            run_fn run) noexcept;

// send_within to a bounded actor whose mailbox is full (mailbox_bound.cpp):
// false if there was no room by `deadline`. Throws std::bad_alloc before
// it waits, if it cannot.
TACT_API bool wait_for_room(actor& receiver, mailbox_gauge& g,
                            std::chrono::steady_clock::time_point deadline);

// Deletes or destroys a delivered message whose allocation says so.
TACT_API void dispose_message(message& m, allocation how) noexcept;

// Marks an actor finished and counts it, after a behaviour returned
// something other than Nodelete (or a poison pill arrived), and takes its
// allocation action: at once without checks; with checks, when the last
// message in flight to it lands. On the worker running it.
TACT_API void retire(actor& a, allocation how) noexcept;

// Checks only: one message to `a` has been delivered or dropped. The last
// one to land after `a` finished takes its deferred allocation action.
TACT_API void land(actor& a) noexcept;

// Checks only: a delivery found `running` behaviours of its actor still
// running. Prints what ran into what and aborts: the executor has broken
// one message at a time, and nothing after this can be trusted.
[[noreturn]] TACT_API void report_overlap(const std::type_info& actor_type,
                                          const std::type_info& message_type,
                                          std::uint32_t running) noexcept;

// Called inside a catch block of a delivery: hands the exception to the
// system's diagnostic handler, naming both types.
TACT_API void report_exception(actor& a, const std::type_info& actor_type,
                               const std::type_info& message_type) noexcept;

// A send to, or a delivery for, an actor that has finished: counted as a
// dead letter, and reported when checks are on (and then landed, so call
// these last).
TACT_API void report_send_to_finished(actor& a, const std::type_info& actor_type,
                                      const std::type_info& message_type) noexcept;
TACT_API void report_delivery_to_finished(actor& a, const std::type_info& actor_type,
                                          const std::type_info& message_type) noexcept;

}  // namespace tact::detail
