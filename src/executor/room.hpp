#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include <tact/detail/atomic.hpp>
#include <tact/mailbox_bound.hpp>

#include "mailbox/sleeper.hpp"
#include "support/futex.hpp"
#include "support/spinlock.hpp"

// Room in a bounded mailbox (docs/flow_control.md): what both actor
// models' senders wait for when a receiver's mailbox is full, and how the
// receiver wakes them. The models decide who waits
// (src/classic/mailbox_bound.cpp, src/transactional/dispatch.cpp); this is
// how. The protocol is inline here, so that its Relacy model
// (tests/model/relacy/room.cpp) runs this very code.
//
// A bounded actor's gauge counts what its senders sent and what it
// received; a sender that finds the difference at the bound waits until
// the actor is down to `low`, half the bound.
//
// Deadlock freedom: a waiting behaviour's actor also goes on once its own
// mailbox is full. In a cycle of waiting senders every one of them is a
// full receiver (each waits for the next), so every one goes on; a sender
// that is full itself does not wait in the first place (the models check
// must_go_on first). The bound is soft by what such senders, and senders
// that cannot wait, send past it.
//
// No lost wake-up. A waiter registers (under the gauge's lock), then sets
// the `waiting` bit of `drained` with a read-modify-write that also
// returns the count published, and waits only if that count still leaves
// the mailbox above `low`. The receiver publishes with a read-modify-write
// of the same word; read-modify-writes of one word are totally ordered, so
// either the waiter's sees the newer count, or the receiver's sees the
// bit, and then the receiver takes the lock (after the registration) and
// wakes every registered waiter once the mailbox is down to `low`. The bit
// stays set until then; a waiter woken early sets it again before it waits
// again.
namespace tact::detail {

class runner;

// A bounded actor's gauge with what only the slow paths use: who waits
// for room, and how many messages a drop policy dropped.
struct bounded_gauge : mailbox_gauge {
  using mailbox_gauge::mailbox_gauge;

  spinlock lock;
  std::vector<sleeper*> waiters;  // registered while they wait; one entry per wait
  std::atomic<std::uint64_t> dropped{0};
};

// Made for an actor whose mailbox is bounded, freed with the actor.
mailbox_gauge* make_gauge(std::uint32_t most, overflow when_full);
void free_gauge(mailbox_gauge* g) noexcept;

inline constexpr std::uint64_t room_waiting_bit = 1;

// Sequentially consistent, against the receiver's publishing.
inline std::uint64_t queued_now(const mailbox_gauge& g, std::uint64_t drained) noexcept {
  return g.sent.load(std::memory_order_seq_cst) - (drained >> 1);
}

// Whether the mailbox is down to `low`; if not, the `waiting` bit is set,
// so the receiver wakes the registered waiters once it is.
inline bool room_made(mailbox_gauge& g) noexcept {
  std::uint64_t d = g.drained.load(std::memory_order_seq_cst);
  if (queued_now(g, d) <= g.low) return true;
  if ((d & room_waiting_bit) != 0) return false;
  d = g.drained.fetch_or(room_waiting_bit, std::memory_order_seq_cst);
  return queued_now(g, d) <= g.low;
}

// The receiver's publishing (publish_received): its count goes up by a
// stride; if a sender waits and the mailbox is down to `low`, the bit is
// cleared and every registered waiter woken.
inline void publish(bounded_gauge& g) noexcept {
  const std::uint64_t step = (g.stride_mask + 1) << 1;
  if ((g.drained.fetch_add(step, std::memory_order_seq_cst) & room_waiting_bit) == 0) return;
  const std::lock_guard hold{g.lock};
  if (queued_now(g, g.drained.load(std::memory_order_seq_cst)) > g.low) return;
  g.drained.fetch_and(~room_waiting_bit, std::memory_order_seq_cst);
  for (sleeper* s : g.waiters) s->wake();
}

// Registered as a waiter of `g` for its lifetime. Throws std::bad_alloc,
// and then is not registered.
class enlisted {
 public:
  enlisted(bounded_gauge& g, sleeper& s) : g_{g}, s_{s} {
    const std::lock_guard hold{g_.lock};
    g_.waiters.push_back(&s_);
  }
  ~enlisted() {
    const std::lock_guard hold{g_.lock};
    const auto it = std::find(g_.waiters.begin(), g_.waiters.end(), &s_);
    *it = g_.waiters.back();
    g_.waiters.pop_back();
  }
  enlisted(const enlisted&) = delete;
  enlisted& operator=(const enlisted&) = delete;

 private:
  bounded_gauge& g_;
  sleeper& s_;
};

// What else ends a wait for room.
struct room_wait {
  // The waiting behaviour's actor's gauge, if it is bounded: it goes on
  // once its own mailbox is full, which is what breaks cycles (see above).
  const mailbox_gauge* own = nullptr;
  // Whether the receiver will never drain (a classic actor that has
  // finished); may be null.
  bool (*gone)(const void* receiver) noexcept = nullptr;
  const void* receiver = nullptr;
  const std::atomic<bool>* stopping = nullptr;  // the system's
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Whether a sender must go on without waiting, room or not.
inline bool must_go_on(const room_wait& w) noexcept {
  return (w.own != nullptr && w.own->full()) || (w.gone != nullptr && w.gone(w.receiver)) ||
         (w.stopping != nullptr && w.stopping->load(std::memory_order_relaxed));
}

// The behaviour running on `self` (which can_suspend()) waits suspended,
// its worker running other work, until there is room in `g` or `w` says
// to go on. Returns whether it may send. Throws std::bad_alloc (or
// std::system_error, no stack) before it waits, if it cannot (room.cpp).
bool suspend_for_room(runner& self, bounded_gauge& g, const room_wait& w);

// A thread that cannot suspend sleeps on a futex until woken.
class thread_waiter final : public sleeper {
 public:
  void wake() noexcept override {
    word_.store(1, std::memory_order_release);
    futex_wake_all(word_);
  }
  // Before the look that decides to sleep: a wake after it cuts the sleep
  // short.
  void arm() noexcept { word_.store(0, std::memory_order_relaxed); }
  void sleep_until(std::chrono::steady_clock::time_point deadline) noexcept {
    if (deadline == std::chrono::steady_clock::time_point::max()) return futex_wait(word_, 0);
    const auto now = std::chrono::steady_clock::now();
    if (now < deadline) futex_wait_for(word_, 0, deadline - now);
  }

 private:
  atomic<std::uint32_t> word_{0};
};

// The same for a thread that cannot suspend: it sleeps.
inline bool sleep_for_room(bounded_gauge& g, const room_wait& w) {
  thread_waiter me;
  const enlisted waiter{g, me};
  for (;;) {
    me.arm();
    if (room_made(g) || must_go_on(w)) return true;
    if (std::chrono::steady_clock::now() >= w.deadline) return false;
    me.sleep_until(w.deadline);
  }
}

}  // namespace tact::detail
