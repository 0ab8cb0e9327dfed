#pragma once

#include <thread>

#include <tact/detail/atomic.hpp>

namespace tact::detail {

// Tells the core we are spinning: saves power and lets the sibling
// hyperthread run (x86 `pause`). In a model check, a yield to the checker.
inline void cpu_relax() noexcept {
  if constexpr (model_checked) {
    model_yield();
  } else {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// After a longer spin: lets another thread run, since with more threads
// than cores the one we wait for may be descheduled.
inline void yield_thread() noexcept {
  if constexpr (model_checked)
    model_yield();
  else
    std::this_thread::yield();
}

}  // namespace tact::detail
