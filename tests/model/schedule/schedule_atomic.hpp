#pragma once

// The cooperative-scheduler backend of tact::detail::atomic (see
// tact/detail/atomic.hpp): each operation is std::atomic's, preceded by a
// call to model::schedule_point(), which the scheduler defines
// (scheduler.cpp), so that it interleaves the engine's code at
// atomic-operation granularity. The models in this folder are built with
// TACT_MODEL_ATOMIC naming this header.

#include <atomic>

namespace tact::detail {

inline constexpr bool model_checked = true;

namespace model {
// Defined by the test: called before each atomic operation, and with
// `spinning` from spin loops and futex waits (the caller cannot progress
// until another thread does). The scheduler may switch threads here.
void schedule_point(bool spinning) noexcept;
}  // namespace model

// std::atomic, with a schedule point before each operation. wait returns
// after one schedule point (a futex wait may return spuriously).
template <class T>
class atomic {
 public:
  constexpr atomic() noexcept = default;
  constexpr atomic(T value) noexcept : a_{value} {}
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    model::schedule_point(false);
    return a_.load(order);
  }
  void store(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    model::schedule_point(false);
    a_.store(value, order);
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    model::schedule_point(false);
    return a_.exchange(value, order);
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order order = std::memory_order_seq_cst) noexcept {
    model::schedule_point(false);
    return a_.compare_exchange_strong(expected, desired, order);
  }
  T fetch_add(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    model::schedule_point(false);
    return a_.fetch_add(value, order);
  }
  T fetch_sub(T value, std::memory_order order = std::memory_order_seq_cst) noexcept {
    model::schedule_point(false);
    return a_.fetch_sub(value, order);
  }
  void wait(T, std::memory_order = std::memory_order_seq_cst) const noexcept {
    model::schedule_point(true);
  }
  void wait_timed(T) const noexcept { model::schedule_point(true); }
  void notify_one() noexcept {}
  void notify_all() noexcept {}

 private:
  std::atomic<T> a_{};
};

inline void model_yield() noexcept { model::schedule_point(true); }

}  // namespace tact::detail
