#include "executor/quiescence.hpp"

#include "support/futex.hpp"

namespace tact::detail {

// Waiter: [waiters += 1; load epoch]; advancer: [epoch += 1; load waiters].
// Both sequentially consistent, so either the waiter sees the new epoch and
// does not sleep, or the advancer sees the waiter and wakes it (the kernel
// re-checks the epoch atomically before sleeping). No system call when
// nobody waits, which is the common case.
void quiescence::advance() noexcept {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) != 0) futex_wake_all(epoch_);
}

void quiescence::await_change(std::uint32_t seen) noexcept {
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  while (epoch_.load(std::memory_order_seq_cst) == seen) futex_wait(epoch_, seen);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace tact::detail
