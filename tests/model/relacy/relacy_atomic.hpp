#pragma once

// The Relacy backend of tact::detail::atomic (see tact/detail/atomic.hpp):
// each operation is Relacy's, which explores the interleavings and the
// weak behaviours the C++ memory model allows. The models in this folder
// are built with TACT_MODEL_ATOMIC naming this header.

// What engine code may include after this header must come first: Relacy
// defines macros (new, delete, pthread_t, ...) that break later standard
// headers. Those macros are undefined again below; its replacement
// operator new and delete stay, so leaks, double frees and uses after free
// of what the engine allocates inside a test are reported.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <source_location>
#include <string_view>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <relacy/relacy.hpp>

#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef assert
#undef errno
#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst
#undef futex
#undef FUTEX_WAIT
#undef FUTEX_WAKE
#undef sched_yield
#undef pthread_yield

// Relacy replaces operator new and delete; the sized deletes that library
// templates call must reach its delete too.
inline void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
inline void operator delete[](void* p, std::size_t) noexcept { ::operator delete[](p); }

namespace tact::detail {

inline constexpr bool model_checked = true;

namespace model {

// A mutant: operations called from a function whose name contains
// `function` (or one of its '|'-separated alternatives) use `order`
// instead of theirs, if that is weaker, clamped to what the operation
// allows. A model sets it to show that it catches the bug a weaker
// ordering there would be.
struct weakening {
  const char* function = nullptr;
  std::memory_order order = std::memory_order_relaxed;

  bool covers(std::string_view name) const noexcept {
    if (function == nullptr) return false;
    for (std::string_view rest{function};;) {
      const std::size_t bar = rest.find('|');
      if (name.find(rest.substr(0, bar)) != std::string_view::npos) return true;
      if (bar == std::string_view::npos) return false;
      rest.remove_prefix(bar + 1);
    }
  }
};
inline weakening weakened{};

enum class operation { load, store, read_modify_write };

constexpr int strength(std::memory_order order) noexcept {
  switch (order) {
    case std::memory_order_relaxed:
      return 0;
    case std::memory_order_acq_rel:
      return 2;
    case std::memory_order_seq_cst:
      return 3;
    default:
      return 1;
  }
}

inline rl::memory_order relacy_order(std::memory_order order, operation op,
                                     const std::source_location& at) noexcept {
  if (weakened.covers(at.function_name())) {
    std::memory_order weaker = weakened.order;
    if (op == operation::load && weaker == std::memory_order_release)
      weaker = std::memory_order_relaxed;
    if (op == operation::load && weaker == std::memory_order_acq_rel)
      weaker = std::memory_order_acquire;
    if (op == operation::store && weaker == std::memory_order_acquire)
      weaker = std::memory_order_relaxed;
    if (op == operation::store && weaker == std::memory_order_acq_rel)
      weaker = std::memory_order_release;
    if (strength(weaker) < strength(order)) order = weaker;
  }
  switch (order) {
    case std::memory_order_relaxed:
      return rl::mo_relaxed;
    case std::memory_order_consume:
      return rl::mo_consume;
    case std::memory_order_acquire:
      return rl::mo_acquire;
    case std::memory_order_release:
      return rl::mo_release;
    case std::memory_order_acq_rel:
      return rl::mo_acq_rel;
    case std::memory_order_seq_cst:
      break;
  }
  return rl::mo_seq_cst;
}

inline rl::debug_info info(const std::source_location& at) noexcept {
  return rl::debug_info{at.function_name(), at.file_name(), static_cast<unsigned>(at.line())};
}

}  // namespace model

// std::atomic's interface, as far as the engine uses it, over rl::atomic.
// Each operation names its call site in Relacy's reports. wait/notify are
// a futex (see support/futex.hpp). A real futex may return spuriously;
// this one does not, so that a lost wake-up shows as a deadlock instead of
// being papered over by a spurious one.
template <class T>
class atomic {
  using location = std::source_location;
  using op = model::operation;

 public:
  atomic(location at = location::current()) noexcept : atomic(T{}, at) {}
  atomic(T value, location at = location::current()) noexcept {
    a_.store(value, rl::mo_relaxed, model::info(at));
  }
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order order = std::memory_order_seq_cst,
         location at = location::current()) const noexcept {
    return a_.load(model::relacy_order(order, op::load, at), model::info(at));
  }
  void store(T value, std::memory_order order = std::memory_order_seq_cst,
             location at = location::current()) noexcept {
    a_.store(value, model::relacy_order(order, op::store, at), model::info(at));
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst,
             location at = location::current()) noexcept {
    return a_.exchange(value, model::relacy_order(order, op::read_modify_write, at),
                       model::info(at));
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order order = std::memory_order_seq_cst,
                               location at = location::current()) noexcept {
    return a_.compare_exchange_strong(
        expected, desired, model::relacy_order(order, op::read_modify_write, at), model::info(at));
  }
  T fetch_add(T value, std::memory_order order = std::memory_order_seq_cst,
              location at = location::current()) noexcept {
    return a_.fetch_add(value, model::relacy_order(order, op::read_modify_write, at),
                        model::info(at));
  }
  T fetch_sub(T value, std::memory_order order = std::memory_order_seq_cst,
              location at = location::current()) noexcept {
    return a_.fetch_sub(value, model::relacy_order(order, op::read_modify_write, at),
                        model::info(at));
  }
  T fetch_or(T value, std::memory_order order = std::memory_order_seq_cst,
             location at = location::current()) noexcept {
    return a_.fetch_or(value, model::relacy_order(order, op::read_modify_write, at),
                       model::info(at));
  }
  T fetch_and(T value, std::memory_order order = std::memory_order_seq_cst,
              location at = location::current()) noexcept {
    return a_.fetch_and(value, model::relacy_order(order, op::read_modify_write, at),
                        model::info(at));
  }

  // Sleeps while the value is `old`, until notified. wait_timed, as a
  // futex wait with a timeout, may also return at any time.
  void wait(T old, std::memory_order = std::memory_order_seq_cst,
            location at = location::current()) const noexcept {
    sleep(old, false, at);
  }
  void wait_timed(T old, location at = location::current()) const noexcept { sleep(old, true, at); }
  void notify_one(location at = location::current()) noexcept {
    a_.wake(rl::ctx(), 1, model::info(at));
  }
  void notify_all(location at = location::current()) noexcept {
    a_.wake(rl::ctx(), 1 << 30, model::info(at));
  }

 private:
  // As in the kernel, the comparison and the sleep are one step, and the
  // comparison reads the current value (the kernel reads it under the lock
  // that wakers take too) without ordering anything: a futex orders
  // nothing. A caller that finds the value changed loads it again: a spin,
  // so a yield, after which Relacy lets its loads see newer values.
  void sleep(T old, bool timed, const location& at) const noexcept {
    rl::context& c = rl::ctx();
    c.sched();
    if (a_.debug_value() != old)
      rl::yield(1, model::info(at));
    else
      a_.wait(c, timed, false, model::info(at));
  }

  mutable rl::atomic<T> a_;
};

// A spin loop's pause: Relacy runs another thread (without this it reports
// a livelock).
inline void model_yield(std::source_location at = std::source_location::current()) noexcept {
  rl::yield(1, model::info(at));
}

// Either half of an asymmetric fence (src/support/asymmetric_fence.hpp):
// a sequentially consistent fence, which is what the pair stands for. A
// mutant that weakens the caller to relaxed leaves the fence out.
inline void model_fence(std::source_location at = std::source_location::current()) noexcept {
  const rl::memory_order order =
      model::relacy_order(std::memory_order_seq_cst, model::operation::read_modify_write, at);
  if (order != rl::mo_relaxed) rl::atomic_thread_fence(order, model::info(at));
}

}  // namespace tact::detail
