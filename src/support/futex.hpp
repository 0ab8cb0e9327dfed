#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>

#if defined(__linux__)
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

// Blocks while `word` holds `expected` (checked atomically by the kernel);
// may return spuriously.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
#if defined(__linux__)
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
            nullptr, nullptr, 0);
#else
  word.wait(expected, std::memory_order_relaxed);
#endif
}

// As futex_wait, but returns after `timeout` at the latest.
inline void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                           std::chrono::nanoseconds timeout) noexcept {
#if defined(__linux__)
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec relative{static_cast<time_t>(seconds.count()),
                          static_cast<long>((timeout - seconds).count())};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
            &relative, nullptr, 0);
#else
  if (word.load(std::memory_order_relaxed) == expected) std::this_thread::sleep_for(timeout);
#endif
}

inline void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
#else
  word.notify_one();
#endif
}

inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX,
            nullptr, nullptr, 0);
#else
  word.notify_all();
#endif
}

}  // namespace tact::detail
