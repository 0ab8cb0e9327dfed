#pragma once

namespace tact::detail {

// Tells the core we are spinning: saves power and lets the sibling
// hyperthread run (x86 `pause`).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace tact::detail
