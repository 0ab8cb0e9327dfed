#pragma once

#include <chrono>
#include <cstdint>

#include <tact/detail/atomic.hpp>

#include "support/futex.hpp"

namespace tact::detail {

// The state word of a thread that sleeps when it has nothing to run (a
// pool worker, or a runner whose behaviours wait), and the steps of the
// parking protocol on it. It knows nothing of queues or executors, so that
// the model check of parking (tests/model/relacy/park_wake.cpp) compiles
// this code itself.
//
// Parking without a lost wake-up (see park()):
//  1. The state goes running -> parking.
//  2. The parker registers as the waiter of every queue whose mail must
//     wake it, each under that queue's lock, and gives up if one has mail
//     (see work_queue::register_waiter). A post to a queue either precedes
//     its registration (the parker sees the mail and gives up) or follows
//     it (the poster takes the parker as the queue's waiter and wakes it).
//  3. parking -> parked, by compare-and-swap. wake() swaps in running:
//     if it got there first the CAS fails and the parker looks for work
//     again; otherwise wake() sees it parked and wakes the futex it sleeps
//     on.
// A registration left behind by a give-up only causes one spurious wake().
class parker {
 public:
  enum state : std::uint32_t {
    running,   // looking for work, or running it
    parking,   // registering (step 2)
    watching,  // a pool worker, parked with stealing on: looks now and then
    sleeping,  // parked until woken
    resting,   // a pool worker the governor stood down (see governor.hpp):
               // parked until woken, its queues swept by another worker
    waiting,   // a runner with behaviours suspended: until woken or a
               // deadline; not parked, since the system is not quiescent
  };

  // ---- only on the parking thread ----

  // Steps 1 to 3. `register_all()` is step 2: false if a registration
  // found mail (or lost its queue to a thief, who then wakes us). `abort()`
  // is read after it: true if the parker must not sleep after all (the
  // executor is stopping). True if the state is now `parked`; false if
  // the caller must look for work again.
  template <class Register, class Abort>
  bool park(Register&& register_all, Abort&& abort, state parked) noexcept {
    state_.store(parking, std::memory_order_seq_cst);
    if (!register_all() || abort()) {
      state_.store(running, std::memory_order_relaxed);
      return false;
    }
    std::uint32_t expected = parking;
    return state_.compare_exchange_strong(expected, parked, std::memory_order_seq_cst);
  }

  // From `from` to `to` while parked (a watcher going to sleep, say);
  // false if a wake() came first, which leaves the state running.
  bool move(state from, state to) noexcept {
    std::uint32_t expected = from;
    return state_.compare_exchange_strong(expected, to, std::memory_order_seq_cst);
  }

  // Whether the state is still `s`: a parker that finds it changed was
  // woken, and acquires what its waker did before the wake-up.
  bool still(state s) const noexcept { return state_.load(std::memory_order_acquire) == s; }

  // Sleeps until woken; may not return before the state changes.
  void sleep(state s) noexcept {
    while (still(s)) futex_wait(state_, s);
  }
  // Sleeps until woken or for `timeout` at most (or spuriously less).
  void sleep_for(state s, std::chrono::nanoseconds timeout) noexcept {
    futex_wait_for(state_, s, timeout);
  }

  // ---- any thread ----

  // The state, as the protocols that read another thread's need it:
  // sequentially consistent with their own steps.
  state now() const noexcept { return static_cast<state>(state_.load(std::memory_order_seq_cst)); }

  // Makes the parker run again, whatever it was doing, and returns the
  // state it found. A compare-and-swap to `running` from the latest state,
  // retried until it succeeds, so it cannot miss a park committing
  // concurrently.
  //
  // For a parker whose parks are counted (quiescence): if the state it
  // found is a parked one (watching, sleeping or resting), `unparked()`
  // runs *before* the swap, while the parker still sits in that state; if
  // the swap then fails (another waker was first, or the parker moved
  // between parked states), `reparked()` gives the count back and the
  // wake tries again. Invariant: the count never exceeds the parkers in a
  // parked state. Taken back after the swap, it could: a waker preempted
  // between the two leaves its parker running, which may park again and
  // add itself a second time while the first addition still stands, so
  // every worker counts parked while the waker itself, a worker in the
  // middle of its batch, is not.
  template <class Unparked, class Reparked>
  state wake(Unparked&& unparked, Reparked&& reparked) noexcept {
    std::uint32_t seen = state_.load(std::memory_order_seq_cst);
    for (;;) {
      const bool parked = seen == watching || seen == sleeping || seen == resting;
      if (parked) unparked();
      if (state_.compare_exchange_strong(seen, running, std::memory_order_seq_cst)) {
        if (parked || seen == waiting) futex_wake_one(state_);
        return static_cast<state>(seen);
      }
      if (parked) reparked();
    }
  }
  // For a parker whose parks nobody counts.
  state wake() noexcept {
    return wake([] {}, [] {});
  }

 private:
  atomic<std::uint32_t> state_{running};
};

}  // namespace tact::detail
