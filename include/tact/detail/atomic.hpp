#pragma once

// The atomic type of the lock-free core: the mailbox and its lock, the
// gulp, the queue-pointer swap and ownership array, parking, the epochs
// and the behaviour commit. In the library it is std::atomic itself, an
// alias, so it costs nothing.
//
// A model check (tests/model) compiles the same engine code against a
// checker instead: it defines TACT_MODEL_ATOMIC as the header of its own
// `atomic` (with std::atomic's interface, as far as the engine uses it,
// plus wait/wait_timed/notify for the futex), `model_yield`,
// `model_fence` and `model_checked`, and includes it before any other
// header.
//
// Call sites read as for std::atomic (`x.load(std::memory_order_acquire)`);
// ordering always sits on the operation, never in a standalone fence, but
// for the two halves of an asymmetric fence (src/support/asymmetric_fence.hpp).
// Spin loops call model_yield() (see support/cpu_relax.hpp) so that a
// checker runs another thread instead of the spinning one.

#include <atomic>

#if defined(TACT_MODEL_ATOMIC)
#include TACT_MODEL_ATOMIC
#else
namespace tact::detail {

inline constexpr bool model_checked = false;

template <class T>
using atomic = std::atomic<T>;

// Only model checks need them (see above).
inline void model_yield() noexcept {}
inline void model_fence() noexcept {}

}  // namespace tact::detail
#endif
