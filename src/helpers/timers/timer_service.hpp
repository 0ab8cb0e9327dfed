#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include <tact/detail/timer_core.hpp>

#include "support/intrusive_inbox.hpp"

namespace tact::detail {

class executor;

// The one timer facility of a system: a thread that sleeps until the
// earliest timer is due, then posts its envelope. Other threads reach it
// through two lock-free inboxes (timers to start, timers cancelled while in
// its heap) and a futex bell; the heap itself belongs to the thread alone.
// The thread starts with the first timer; an idle facility uses no CPU.
//
// On a deterministic executor there is no thread and the clock is
// virtual: it stands still until advance_to() moves it, which fires the
// timers due on the way, on the calling thread.
class timer_service {
 public:
  // Registers the drop of timer envelopes that never run (on_discard).
  explicit timer_service(executor& ex);
  // shutdown() must have run.
  ~timer_service();
  timer_service(const timer_service&) = delete;
  timer_service& operator=(const timer_service&) = delete;

  executor& owner() const noexcept { return ex_; }
  // Starts the thread if it is not running (std::system_error if it
  // cannot be). Any thread.
  void ensure_thread();
  // Schedules r (due_ set, its send promised to the executor), adopting
  // one reference. Any thread; after shutdown() the timer simply ends.
  void start(timer_record* r) noexcept;
  // r was cancelled while it may be in the heap: take it out now rather
  // than when it comes due, so cancelled timers hold no memory. Adopts one
  // reference. Any thread.
  void cancelled(timer_record* r) noexcept;
  // Stops the thread and ends every timer still scheduled (their messages
  // are freed; cancel() on them returns false), and every timer started
  // from now on. Before the executor stops taking messages: a timer's
  // envelope may still be queued. Idempotent.
  void shutdown() noexcept;

  // The time timers are due against: the steady clock, or the virtual one.
  std::chrono::steady_clock::time_point now() const noexcept {
    return virtual_ ? virtual_now_ : std::chrono::steady_clock::now();
  }
  // ---- virtual time only, on the thread driving the executor ----
  // The earliest due time of a pending timer.
  std::optional<std::chrono::steady_clock::time_point> next_due() noexcept;
  // Timers pending.
  std::size_t pending() noexcept;
  // Moves the clock to `to` (never back), firing the timers due up to
  // then in due order, each at its own due time.
  void advance_to(std::chrono::steady_clock::time_point to) noexcept;

 private:
  void run() noexcept;
  void ring() noexcept;
  void take_starts() noexcept;
  void take_cancels() noexcept;
  void expire(timer_record* r, std::chrono::steady_clock::time_point now) noexcept;
  void end(timer_record* r) noexcept;
  // The heap: a pairing heap on (due_, sequence_) whose nodes are the
  // records themselves, so that inserting one cannot fail (a vector-based
  // heap had to grow on the thread, where running out of memory ended the
  // process). Insertion is O(1), taking the earliest out or a cancelled one
  // O(log n) amortized.
  static bool before(const timer_record* a, const timer_record* b) noexcept;
  static timer_record* meld(timer_record* a, timer_record* b) noexcept;
  static timer_record* merge_pairs(timer_record* first) noexcept;
  bool in_heap(const timer_record* r) const noexcept {
    return r->heap_prev_ != nullptr || r == root_;
  }
  void insert(timer_record* r) noexcept;
  void erase(timer_record* r) noexcept;

  executor& ex_;
  const bool virtual_;
  std::chrono::steady_clock::time_point virtual_now_{};
  intrusive_inbox<timer_record, &timer_record::next_start_> starts_;
  intrusive_inbox<timer_record, &timer_record::next_cancel_> cancels_;
  // Rung when an inbox goes from empty to not; the thread sleeps on it.
  std::atomic<std::uint32_t> bell_{0};
  std::atomic<bool> closing_{false};
  std::atomic<bool> started_{false};
  std::mutex start_mutex_;  // starting the thread, once; shutdown
  bool closed_ = false;     // under start_mutex_
  std::thread thread_;
  // The thread's own.
  timer_record* root_ = nullptr;  // the earliest due
  std::size_t heap_size_ = 0;
  std::uint64_t sequence_ = 0;
};

}  // namespace tact::detail
