#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include <tact/detail/envelope.hpp>
#include <tact/export.hpp>

namespace tact {
class actor_system;
}

// What the timer templates (tact/timer.hpp, tact/tx/timer.hpp) need from
// the library. Not for users.
namespace tact::detail {

class timer_service;

// One scheduled send, shared by reference count between the handles the
// program holds, the system's timer thread and the envelopes it posts. The
// derived class (one per actor model) knows the target and the message;
// this part is the race between delivery and cancellation, settled by
// compare-and-swap on `state` (see timers.cpp).
class TACT_API timer_record {
 public:
  timer_record(const timer_record&) = delete;
  timer_record& operator=(const timer_record&) = delete;

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  bool periodic() const noexcept { return period_.count() > 0; }

  // On the timer thread when the timer is due: posts the envelope
  // {target, this, &fire_timer} to the target's queue.
  virtual post_outcome post() noexcept = 0;
  // On the target's worker, before the race: true if the envelope belongs
  // on another queue and was re-posted there (a serialized transactional
  // actor's home), to run from there.
  virtual bool redirect(void*) noexcept { return false; }
  // On the target's worker, once this delivery won the race against
  // cancel(): runs the behaviour.
  virtual void deliver(void* target) noexcept = 0;
  // On the target's worker, when the timer ended before this delivery
  // could start: undoes what post() counted.
  virtual void drop(void* target) noexcept = 0;
  // Once, when the timer ends without delivering (again): frees the
  // message now rather than with the last handle. On any thread.
  virtual void discard() noexcept = 0;
  // Once, when the timer thread is done with the timer (no more post()).
  virtual void finished() noexcept {}

 protected:
  timer_record(actor_system& system, std::chrono::nanoseconds period) noexcept;
  virtual ~timer_record();

 private:
  friend class timer_service;
  friend struct timer_record_access;

  std::atomic<std::uint32_t> refs_{1};
  std::atomic<std::uint32_t> state_{0};
  timer_service& service_;
  const std::chrono::nanoseconds period_;
  // Set by the timer thread while the record is in its heap; read by
  // cancel() to decide whether to tell it (see timers.cpp).
  std::atomic<bool> in_heap_{false};
  // The timer thread's alone, except next_start_/next_cancel_, which link
  // the record into one of its inboxes before it takes them.
  std::chrono::steady_clock::time_point due_{};
  std::uint64_t sequence_ = 0;
  bool starved_ = false;  // its firing found no memory, and has not been queued since
  // The record is a node of the thread's heap (a pairing heap, so that
  // scheduling allocates nothing on the thread): its first child, its
  // next sibling, and its previous sibling or, for a first child, its
  // parent (null for the root and for a record outside the heap).
  timer_record* heap_child_ = nullptr;
  timer_record* heap_next_ = nullptr;
  timer_record* heap_prev_ = nullptr;
  timer_record* next_start_ = nullptr;
  timer_record* next_cancel_ = nullptr;
};

// The run function of every timer envelope: target is the actor's, message
// the record.
TACT_API void fire_timer(void* target, void* record) noexcept;

// The timer facility of `system`.
TACT_API timer_service& timers_of(actor_system& system) noexcept;

// Hands r to its system's timer thread, due after `delay` (then every
// period, if periodic). The thread takes a reference of its own.
TACT_API void arm(timer_record* r, std::chrono::nanoseconds delay);

// See tact::timer::cancel.
TACT_API bool cancel(timer_record* r) noexcept;

// Whether r may still deliver: neither cancelled nor done.
TACT_API bool active(const timer_record* r) noexcept;

}  // namespace tact::detail
