#pragma once

#include <tact/detail/atomic.hpp>

#include "support/assert.hpp"

namespace tact::detail {

// The wait-free swap of two ownership slots that work stealing is made of
// (Cforall thesis, "Queue Pointer Swap"): a thief exchanges one of its own queue
// pointers (`mine`) with a victim's (`theirs`), provided the victim's still
// points at `wanted`, the queue the thief inspected. Returns whether the
// swap happened; a failure changes nothing, and there is no retry (either
// the queue was stolen by someone else, or ours was: give up either way).
//
// Invariant: a slot set to null by a thief is next written only by that
// same thief. Null is written only by step 2, into the thief's own slot, and
// every other writer is a compare-and-swap from a non-null value (step 3 of
// another thief), which cannot succeed on null. So steps 3-fail and 4 may
// write back with a plain store, and a reader that sees null knows a swap
// is in flight and skips the slot. Queue pointers are never null otherwise.
//
// A worker reads only its own slots on its fast path and never sees null
// there (only it nulls them, and not while sweeping). Thieves contend with
// each other through these compare-and-swaps, never with a victim: the
// queue itself is protected by being_processed, which settles the race with
// a victim that loaded the pointer before the swap (see pool_worker::sweep).
//
// Sequentially consistent so that a victim that is about to park either
// sees the new queue in its slot or is seen as parking by the thief (see
// parker::park and thief::steal_from).
template <class Queue>
bool try_swap(atomic<Queue*>& mine, atomic<Queue*>& theirs, Queue* wanted) noexcept {
  // Step 0: our pointer, never null (only we null it). Step 1, the check
  // that the victim's pointer is not null, is the caller's scan: `wanted`.
  TACT_ASSERT(wanted != nullptr, "a thief swaps for a queue it saw in the victim's slot");
  Queue* const ours = mine.load(std::memory_order_seq_cst);
  TACT_ASSERT(ours != nullptr, "only its own swap nulls a thief's slot");
  // Step 2: null our slot; fails only if a thief took it from us meanwhile.
  Queue* expected = ours;
  if (!mine.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst)) return false;
  // Step 3: give the victim our queue; fails if its slot changed.
  expected = wanted;
  if (!theirs.compare_exchange_strong(expected, ours, std::memory_order_seq_cst)) {
    mine.store(ours, std::memory_order_seq_cst);  // ours since step 2 (invariant)
    return false;
  }
  // Step 4: the victim's queue is ours; nobody else writes a null slot.
  mine.store(wanted, std::memory_order_seq_cst);
  return true;
}

}  // namespace tact::detail
