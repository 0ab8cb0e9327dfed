#pragma once

#include <utility>

#include <tact/detail/atomic.hpp>

#include "support/assert.hpp"

namespace tact::detail {

// A hand-off from any number of threads to one. Items are linked through
// a pointer field of their own (`Link`), so a push allocates nothing and
// cannot fail, and the inbox holds as many items as are pushed: it is
// unbounded, and a push never waits for the consumer. The consumer takes
// everything pushed so far at once, oldest first. Each thread's pushes
// come out in the order it made them.
//
// Why not boost::lockfree::stack or queue (docs/design.md,
// "Boost.Lockfree"): they copy each item into a node of their own, from
// a pool that allocates when empty (or refuses the push, when bounded),
// and cannot tell a push that it found the inbox empty.
template <class T, T* T::*Link>
class intrusive_inbox {
 public:
  // ---- any thread ----

  // Adds `item`; true if the inbox was empty, so that the caller wakes
  // the consumer only then (a consumer that looks at its wake-up signal
  // before take_all() finds a push onto a non-empty inbox in that take).
  // @pre `item->*Link` is null: `item` is in no inbox through `Link`.
  bool push(T* item) noexcept {
    TACT_ASSERT(item->*Link == nullptr, "an item is pushed only while it is in no inbox");
    T* head = head_.load(std::memory_order_relaxed);
    // Treiber's push. The CAS installs `item` only if the head is still
    // the one `item` now links to, so nothing pushed meanwhile is lost;
    // comparing the head alone is safe because nobody ever reads through
    // it but take_all(), which detaches the whole list (no pop, so no ABA
    // problem: an old head pushed again is as good a successor as any).
    // The CAS releases the item's fields to take_all(); sequentially
    // consistent, because callers order pushes against flags of their
    // own (timer_service: a start against shutdown's `closing_`).
    do {
      item->*Link = head;
    } while (!head_.compare_exchange_weak(head, item, std::memory_order_seq_cst));
    return head == nullptr;
  }

  // ---- the consumer ----

  // Everything pushed so far, oldest first, linked through `Link` (null
  // after the last); null if nothing was. The items are the caller's,
  // who clears each one's link before pushing it again.
  T* take_all() noexcept {
    // Acquires every push it detaches (each CAS released its item, and
    // later CASes continue the release sequence of earlier ones).
    T* newest_first = head_.exchange(nullptr, std::memory_order_seq_cst);
    T* oldest_first = nullptr;
    while (newest_first != nullptr)
      oldest_first = std::exchange(newest_first, std::exchange(newest_first->*Link, oldest_first));
    return oldest_first;
  }

 private:
  atomic<T*> head_{nullptr};
};

}  // namespace tact::detail
