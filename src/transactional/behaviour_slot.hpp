#pragma once

#include <cstdint>

#include <tact/detail/tx_core.hpp>

#include "support/cpu_relax.hpp"

// A transactional actor's behaviour slot (cell::slot) and how a become is
// committed on it (xTActors: BECOME by compare-and-swap). The slot holds
// the actor's behaviour; its low bit, cell::committing, says that a become
// is being committed. A commit claims the slot, queues its sends, then
// installs the new behaviour, which clears the bit:
//
//   claim:    running -> running | committing   (compare-and-swap)
//   install:  -> next                           (store)
//
// Of two invocations that ran the same behaviour and both become, one
// claim succeeds; the other fails, discards what it staged and runs its
// message again against the new behaviour. Readers wait out the bit, which
// is what makes a commit look atomic: a message that starts after a
// commit, or that one of its sends caused, sees the new behaviour.
namespace tact::detail::tx {

inline behaviour_base* behaviour_in(std::uintptr_t slot) noexcept {
  return reinterpret_cast<behaviour_base*>(slot & ~cell::committing);
}

// The slot once no become is being committed. A commit holds the bit only
// while it queues its sends, so waiting is short; and a retry, which runs
// against the new behaviour, then sends after the winner's sends.
[[gnu::noinline]] inline std::uintptr_t wait_for_commit(const cell& c) noexcept {
  std::uintptr_t slot = c.slot.load(std::memory_order_seq_cst);
  for (std::uint32_t spins = 0; slot & cell::committing; ++spins) {
    if (spins < 64)
      cpu_relax();
    else
      yield_thread();
    slot = c.slot.load(std::memory_order_seq_cst);
  }
  return slot;
}

inline std::uintptr_t settled_slot(const cell& c) noexcept {
  const std::uintptr_t slot = c.slot.load(std::memory_order_seq_cst);
  return slot & cell::committing ? wait_for_commit(c) : slot;
}

// Claims the slot for a become by the invocation that ran `running`: false
// if another invocation committed a become since we read the slot, or is
// committing one now.
//
// The claim is the unlink: from it on, no dispatch starts running
// `running` (settled_slot waits out the bit, then reads the new
// behaviour), and a dispatch that read the slot before it did so before it
// in the single total order of sequentially consistent operations the
// epochs reason in (see executor/epochs.hpp), whose retire() reads the
// epoch after it. So the claim is sequentially consistent. A message sent
// by the commit reads the slot after its post, which the claim precedes,
// so it sees the bit or the new behaviour, never `running`.
inline bool claim(cell& c, behaviour_base* running) noexcept {
  std::uintptr_t expected = reinterpret_cast<std::uintptr_t>(running);
  return c.slot.compare_exchange_strong(expected, expected | cell::committing,
                                        std::memory_order_seq_cst);
}

// Installs `next` and clears the bit, after a claim (or, for an actor
// created serialized, by the one thread that runs it). It only has to
// publish `next`: release, paired with the (sequentially consistent, so
// acquiring) loads of settled_slot, which then see it fully built.
inline void install(cell& c, behaviour_base* next) noexcept {
  c.slot.store(reinterpret_cast<std::uintptr_t>(next), std::memory_order_release);
}

}  // namespace tact::detail::tx
