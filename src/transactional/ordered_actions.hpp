#pragma once

#include <cstdint>
#include <utility>

#include <tact/detail/atomic.hpp>

// The on_commit actions of a parallel actor, run one batch at a time and
// in the order of its commits (docs/transactional.md, "Order"), although
// its commits happen on several workers at once.
//
// A commit with actions queues them as one batch on a word of its actor
// (cell::actions): a stack of batches, newest on top, and a `draining`
// bit. Then it drains: if no other thread is draining, it takes the whole
// stack, runs it oldest first, and goes on until the stack is empty;
// otherwise it leaves its batch to the drainer. So actions may run on
// another worker than their commit's, but never two of one actor at once,
// and never out of order:
//
// * A become's batch is queued while its commit holds the behaviour slot's
//   committing bit, which the next become's claim waits out: batches of
//   becomes are queued in commit order. Any other commit queues after the
//   becomes it saw committed.
// * A drainer takes the stack atomically, so each take holds exactly the
//   batches queued since the previous take, and reversed they are in
//   order. Only the holder of `draining` takes, and it gives the bit up
//   only by a compare-and-swap from an empty stack: a batch queued while it
//   ran makes that fail, and it takes that batch too. So a batch is run
//   once, by the drainer holding the bit when (or after) it was queued.
// * Every operation is a read-modify-write on the one word, acquire and
//   release: a batch's contents are published by its push, and one
//   drainer's actions happen before the next drainer's.
//
// Nobody waits: a commit whose batch another thread will run returns at
// once, so an action may wait itself (an ask) without blocking the
// actor's other commits, which queue behind it.
namespace tact::detail::tx {

inline constexpr std::uintptr_t draining = 1;

// `Batch` has a `Batch* next`, free for this protocol. Only by a commit of
// the actor that owns `word`, as described above.
template <class Batch>
void queue_batch(atomic<std::uintptr_t>& word, Batch* b) noexcept {
  std::uintptr_t old = word.load(std::memory_order_relaxed);
  do {
    b->next = reinterpret_cast<Batch*>(old & ~draining);
  } while (!word.compare_exchange_strong(
      old, reinterpret_cast<std::uintptr_t>(b) | (old & draining), std::memory_order_acq_rel));
}

// The batches of a taken stack word (newest first), oldest first.
template <class Batch>
Batch* oldest_first(std::uintptr_t taken) noexcept {
  Batch* oldest = nullptr;
  for (Batch* b = reinterpret_cast<Batch*>(taken & ~draining); b != nullptr;) {
    Batch* const next = b->next;
    b->next = oldest;
    oldest = b;
    b = next;
  }
  return oldest;
}

// After queue_batch: runs the queued batches, oldest first, through
// `run(Batch*)` (which frees each), unless another thread drains; returns
// once none is left for this thread to run.
template <class Batch, class Run>
void drain_batches(atomic<std::uintptr_t>& word, Run&& run) {
  std::uintptr_t old = word.load(std::memory_order_relaxed);
  do {
    if ((old & draining) != 0 || old == 0) return;  // another drainer has ours, or ran it
  } while (!word.compare_exchange_strong(old, draining, std::memory_order_acq_rel));
  for (;;) {
    for (Batch* b = oldest_first<Batch>(old); b != nullptr;) run(std::exchange(b, b->next));
    // Give the bit up if nothing came meanwhile; else take what came.
    old = draining;
    if (word.compare_exchange_strong(old, 0, std::memory_order_acq_rel)) return;
    while (!word.compare_exchange_strong(old, draining, std::memory_order_acq_rel)) {
    }
  }
}

}  // namespace tact::detail::tx
