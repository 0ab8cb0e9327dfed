#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tact::detail {

// Whether an executor is quiescent (no message queued or running), and
// waiting until it is. Quiescent means every pool worker is parked and no
// guest is in a pass (a thread lent by an asker may be running a batch
// while every worker is parked).
//
// A worker that commits to parking adds one to `parked`; whoever wakes it
// subtracts one while the worker still sits in its parked state, before
// moving it to running, and adds it back if that move fails (see
// parker::wake; a watcher leaving by itself does the same). The worker can
// park, and add, again only after that move, so after the subtraction: a
// subtraction may come before its worker's addition, making the count
// lower for a moment, but the count never exceeds the workers in a parked
// state. So parked == workers means every worker committed to sleep after
// finding all its queues empty under their locks. Whoever makes the
// system quiescent (the last worker to park, or the last guest to end its
// pass: each updates its count, then reads the other's, all sequentially
// consistent, so whichever comes second sees both at rest; both may)
// advances an epoch that waiters watch.
//
// It also sums the time every worker spends parked at once (idle()), the
// spells in which the system has nothing to run, for the governor: its
// epochs are measured in time the workers could run (see
// executor::adapt_when_due). Each worker stamps the time as it parks,
// before it adds itself; whoever takes the count back from full (a waker,
// or a watcher leaving by itself) ends the spell and adds it up, before
// the worker it unparks runs. The stamp it reads is the spell's start (or
// that of a worker that parked with the last one, a moment apart): the
// relaxed stamp is sequenced before its worker's seq_cst add, which
// releases it, and the sub that finds the count full reads from that add
// (or an RMW after it) and acquires it; while the count is full no worker
// can park, so no later stamp overwrites it. Guests are not counted: a
// spell in which only an asker's thread runs batches counts as idle.
class quiescence {
 public:
  explicit quiescence(std::uint32_t workers) noexcept : workers_{workers} {}

  // ---- pool workers ----
  void parked() noexcept {
    idle_since_.store(clock_now(), std::memory_order_relaxed);
    if (parked_.fetch_add(1, std::memory_order_seq_cst) + 1 == workers_ &&
        passes_.load(std::memory_order_seq_cst) == 0)
      advance();
  }
  // By the worker's waker, before it wakes it (see parker::wake).
  void unparked() noexcept {
    if (parked_.fetch_sub(1, std::memory_order_seq_cst) == workers_) [[unlikely]]
      idle_.fetch_add(clock_now() - idle_since_.load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
  }
  bool all_parked() const noexcept { return parked_.load(std::memory_order_seq_cst) == workers_; }

  // ---- guests, around each pass over the queues; and whatever must keep
  // the system from counting quiescent meanwhile (work postponed for
  // memory, a change of the count of running workers) ----
  void pass_begins() noexcept { passes_.fetch_add(1, std::memory_order_seq_cst); }
  void pass_ends() noexcept {
    if (passes_.fetch_sub(1, std::memory_order_seq_cst) == 1 && all_parked()) advance();
  }

  // ---- any thread ----

  // The spells with every worker parked that have ended, summed, in
  // steady_clock nanoseconds (see above). A hint: a spell that ends
  // counts a moment after its waker took the count back.
  std::int64_t idle() const noexcept { return idle_.load(std::memory_order_relaxed); }

  bool reached() const noexcept {
    return all_parked() && passes_.load(std::memory_order_seq_cst) == 0;
  }

  // Waiting: read epoch(), check reached() (or whatever the system must
  // reach), and if not, await_change(epoch) returns once the system has
  // been quiescent again since. Reading the epoch first means that a
  // worker parking after the check has moved it, and the wait returns at
  // once.
  std::uint32_t epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
  void await_change(std::uint32_t seen) noexcept;
  // Wakes the waiters: the system may have reached what they wait for
  // (quiescence, or the stop).
  void advance() noexcept;

 private:
  const std::uint32_t workers_;
  std::atomic<std::uint32_t> parked_{0};
  std::atomic<std::uint32_t> passes_{0};
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> waiters_{0};
  std::atomic<std::int64_t> idle_since_{0};  // the last park's stamp
  // On a line of its own: read by running workers every few sweeps,
  // written once per spell.
  alignas(64) std::atomic<std::int64_t> idle_{0};

  static std::int64_t clock_now() noexcept {
    return std::chrono::steady_clock::now().time_since_epoch().count();
  }
};

}  // namespace tact::detail
