#pragma once

#include <atomic>

#include <tact/detail/atomic.hpp>

namespace tact::detail {

// The two halves of an asymmetric fence. A side that runs often and must
// not pay for a full barrier (a dispatch publishing the behaviour it is
// about to run, see epochs::protect) calls light_fence() between its store
// and its load; a side that runs rarely (a collect freeing what a stalled
// epoch holds back) calls heavy_fence() between its own store and load.
// Together they order as two sequentially consistent fences would: either
// the light side's load sees the heavy side's store, or the heavy side's
// load sees the light side's store.
//
// The light half only keeps the compiler from moving the load above the
// store. The heavy half is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED):
// the kernel runs a full barrier on every core that runs a thread of this
// process (a thread not running had one when it was switched out), so
// each light side's store and load fall on either side of some barrier.
// In a model check both halves are sequentially consistent fences, which
// is what the pair stands for.

// The library's heavy half, behind can_fence_heavily() and heavy_fence().
bool register_for_membarrier() noexcept;
void membarrier_fence() noexcept;

// Registers the process for heavy fences. False if the kernel cannot give
// them (too old, or a sandbox forbids membarrier): heavy_fence() must not
// be called then.
inline bool can_fence_heavily() noexcept {
  if constexpr (model_checked)
    return true;
  else
    return register_for_membarrier();
}

// @pre can_fence_heavily() returned true.
inline void heavy_fence() noexcept {
  if constexpr (model_checked)
    model_fence();
  else
    membarrier_fence();
}

inline void light_fence() noexcept {
  if constexpr (model_checked)
    model_fence();
  else
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace tact::detail
