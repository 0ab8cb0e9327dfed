#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include <tact/detail/envelope.hpp>
#include <tact/diagnostic.hpp>

#include "executor/runner.hpp"

namespace tact {
class actor_system;
struct system_config;
}  // namespace tact

// The executor as the actor models (src/classic, src/transactional) see
// it: which queue an actor takes, posting an envelope, the runner on this
// thread (the queue in hand, holding appends, pinning the epochs), and
// counting what the engine reports in its statistics. The executor itself
// stays opaque here, and nothing here pulls in Boost.
namespace tact::detail {

class executor;

// What the actor models count in the executor's statistics (see
// worker_stats), besides what the executor counts itself: per runner, or
// shared by threads that run none.
enum class tally : std::uint8_t {
  actor_finished,  // actors_finished
  dead_letter,     // dead_letters
  rejected,        // messages_rejected
  sends_waited,    // sends_waited
  over_bound,      // sends_over_bound
  dropped_full,    // sends_dropped
};
inline constexpr std::size_t tally_count = 6;

// ---- the executor; any thread ----

executor& executor_of(actor_system& system) noexcept;
actor_system& system_of(const executor& ex) noexcept;
const system_config& config_of(const executor& ex) noexcept;
// Set once the system stops taking messages; read it where a send must
// then be refused.
const std::atomic<bool>& stopping_flag(const executor& ex) noexcept;
// How many runners the executor has (see runner::index), for what an
// actor model keeps per runner.
std::uint32_t runner_count(const executor& ex) noexcept;
// The executor that actors constructed on this thread join by default (see
// executor::ambient), or nullptr.
executor* ambient_executor() noexcept;

// ---- queues; any thread ----

// The queue of a new classic actor, counted alive: the ambient scope's, or
// as home_queue(); or, if `beside` (its creator, made by a behaviour,
// runs its first message: docs/design.md, "Depth first"), the queue its
// worker has in hand. std::logic_error once the system is stopping.
std::uint32_t admit(executor& ex, bool beside = false);
// The home queue of an actor created now that does not count as a live
// classic actor: created by a behaviour, one of its worker's own queues
// (round robin); else any queue (round robin).
std::uint32_t home_queue(executor& ex) noexcept;
// Any queue, round robin: for a message from outside the runners.
std::uint32_t any_queue(executor& ex) noexcept;
// The queue that the ambient scope on this thread gives `ex`'s new actors
// (a sponsor's), or runner::no_queue.
std::uint32_t queue_in_scope(const executor& ex) noexcept;

// ---- posting; any thread ----

// The runner of `ex` on the calling thread, or nullptr.
inline runner* this_runner(const executor& ex) noexcept {
  runner* r = this_thread_runner;
  return r != nullptr && &r->owner() == &ex ? r : nullptr;
}

// Everything but the same-queue append: the mailbox, and waking whoever
// sleeps on it. Out of line, so that the fast path saves no registers.
void post_to_mailbox(executor& ex, runner* self, std::uint32_t queue, void* target, void* message,
                     run_fn run);

// A share for a hungry worker, to `queue`, one of its (see
// executor::post_now). Throws std::bad_alloc if the queue cannot grow;
// nothing was sent then.
void post_share(executor& ex, runner& self, std::uint32_t queue, void* target, void* message,
                run_fn run);

// Appends the envelope {target, message, run} to queue `queue` of `ex`.
// `self`: this_runner(ex), which the caller usually has at hand. Throws
// std::bad_alloc if the queue cannot grow; nothing was sent then. The
// three words stay in registers until they are stored into a queue: an
// envelope built on the stack and read back as one wider load would stall
// on store forwarding. A batch's first merge that finds no room takes
// the same way on from inside try_append (runner::weigh_then_send): a
// change to the way after try_append changes it there too.
inline void post(executor& ex, runner* self, std::uint32_t queue, void* target, void* message,
                 run_fn run) {
  if (self != nullptr && (self->try_append(queue, target, message, run) ||
                          self->try_rejoin(queue, target, message, run)))
    return;
  post_to_mailbox(ex, self, queue, target, message, run);
}

// ---- work postponed for lack of memory; any thread ----

// Work an actor model could not queue for lack of memory where nothing may
// fail (a commit's sends, once its become is installed), kept by the model
// in order until it can be. While some is kept (from postponed_begins to
// postponed_ends) the system is not quiescent, the executor's workers call
// retry(arg) between sweeps and sleep no longer than
// defaults::memory_retry, and a parked one is woken to do so. stop(), once
// the workers are gone, calls refuse(arg) for whatever is left. One per
// executor, set before anything is kept.
struct postponed_work {
  bool (*retry)(void* arg) noexcept;  // queues what it can; true if it queued some
  void (*refuse)(void* arg) noexcept;
  void* arg;
};
void keep_postponed(executor& ex, postponed_work work) noexcept;
void postponed_begins(executor& ex) noexcept;
void postponed_ends(executor& ex) noexcept;

// ---- statistics and reports; any thread ----

void count(executor& ex, tally what) noexcept;
// A classic actor whose queue was `home` finished or was destroyed
// unfinished (see executor::actor_finished).
void actor_finished(executor& ex, std::uint32_t home) noexcept;
void report(const executor& ex, diagnostic_kind kind, std::string text,
            std::exception_ptr error = {}) noexcept;
// As report(), with the text made by `text()` in here: out of memory, the
// report goes. For callers that must not throw.
template <class Text>
void report_made(const executor& ex, diagnostic_kind kind, Text&& text,
                 std::exception_ptr error = {}) noexcept {
  try {
    report(ex, kind, text(), std::move(error));
  } catch (const std::bad_alloc&) {
  }
}
// A message destroyed without being sent (checks; see
// executor::note_unsent_message).
void note_unsent_message(executor& ex) noexcept;
// No memory for `what` on a path that cannot fail; the caller keeps the
// work and retries it (see executor::note_memory_wait).
void note_memory_wait(executor& ex, const char* what) noexcept;

// ---- lifetimes (checks); any thread ----

// Whether `ex` names an executor that has been constructed and not yet
// destroyed. Executors are listed only with checks on (without, this is
// false for every one), and the lookup takes a lock: for the rare paths
// where a program may reach a destroyed system (a send to a finished
// actor, an ask), never for the send path. A newer executor that happens
// to occupy the same memory counts as live; the use then reaches that
// system, which those paths survive.
bool live(const executor* ex) noexcept;
// The program broke a rule of docs/concepts.md, "Lifetimes": it used
// something of a destroyed system, or destroys a system that something it
// still holds needs. Writes "tact: <what>" on standard error and aborts:
// going on would reach freed memory.
[[noreturn]] void lifetime_violated(const std::string& what) noexcept;

}  // namespace tact::detail
