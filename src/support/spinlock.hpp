#pragma once

#include <tact/detail/atomic.hpp>

#include "support/cpu_relax.hpp"

namespace tact::detail {

// A lock for critical sections of a few stores (a work queue's push or
// gulp, a classic actor's anchor), where spinning beats sleeping.
// Test-and-test-and-set: waiters spin on a plain load and only retry the
// exchange when the lock looks free. After a short spin a waiter yields,
// because with more workers than cores the holder may be descheduled.
class spinlock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) wait_until_free();
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  void wait_until_free() noexcept {
    for (unsigned spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
      if (spins < 128)
        cpu_relax();
      else
        yield_thread();
    }
  }

  atomic<bool> held_{false};
};

}  // namespace tact::detail
