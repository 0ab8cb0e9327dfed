#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>

#include <tact/detail/atomic.hpp>

#if defined(__linux__) && !defined(TACT_MODEL_ATOMIC)
#define TACT_FUTEX_SYSCALL 1
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tact::detail {

// Sleeping on a 32-bit atomic. On Linux this is the futex system call
// itself, not std::atomic::wait: libstdc++'s wait and notify go through a
// process-wide waiter table with sequentially consistent read-modify-writes
// on every notify, which costs a shared cache line and, worse, adds
// happens-before edges that hide missing orderings in our own protocols
// from ThreadSanitizer. The futex orders nothing: callers' atomics must.
// In a model check it is the checker's wait (see tact/detail/atomic.hpp).

// Blocks while `word` holds `expected` (checked atomically by the kernel);
// may return spuriously.
inline void futex_wait(atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
#if defined(TACT_FUTEX_SYSCALL)
  static_assert(sizeof(atomic<std::uint32_t>) == sizeof(std::uint32_t));
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
            nullptr, nullptr, 0);
#else
  word.wait(expected, std::memory_order_relaxed);
#endif
}

// As futex_wait, but returns after `timeout` at the latest.
inline void futex_wait_for(atomic<std::uint32_t>& word, std::uint32_t expected,
                           std::chrono::nanoseconds timeout) noexcept {
#if defined(TACT_FUTEX_SYSCALL)
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec relative{static_cast<time_t>(seconds.count()),
                          static_cast<long>((timeout - seconds).count())};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
            &relative, nullptr, 0);
#elif defined(TACT_MODEL_ATOMIC)
  (void)timeout;
  word.wait_timed(expected);
#else
  if (word.load(std::memory_order_relaxed) == expected) std::this_thread::sleep_for(timeout);
#endif
}

inline void futex_wake_one(atomic<std::uint32_t>& word) noexcept {
#if defined(TACT_FUTEX_SYSCALL)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
#else
  word.notify_one();
#endif
}

inline void futex_wake_all(atomic<std::uint32_t>& word) noexcept {
#if defined(TACT_FUTEX_SYSCALL)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX,
            nullptr, nullptr, 0);
#else
  word.notify_all();
#endif
}

}  // namespace tact::detail

#undef TACT_FUTEX_SYSCALL
