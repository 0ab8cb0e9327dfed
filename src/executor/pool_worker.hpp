#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "executor/runner.hpp"
#include "executor/stealing.hpp"
#include "support/counter.hpp"

namespace tact::detail {

// One of the executor's own threads. It owns a contiguous block of slots in
// the executor's ownership array and sweeps them round robin: test each
// queue without the lock, gulp it, process the batch locally (Cforall
// thesis, "CFA Executor"). When its sweeps keep finding nothing it tries,
// now and then, to steal a queue from another worker (see thief); after
// enough empty sweeps it parks until a send wakes it. While the governor
// stands it down it rests instead, and a running worker sweeps its block
// as well as its own (see executor::for_each_covered).
class pool_worker : public runner {
 public:
  // `victim_groups`: for steal_policy::locality (see victim_picker).
  pool_worker(executor& owner, std::uint32_t index, block owned,
              std::vector<std::vector<std::uint32_t>> victim_groups);

  // The thread's body: returns once the executor is stopping.
  void run();

  // ---- any thread ----

  // Makes a parked (or parking) worker sweep again.
  void wake() noexcept override;
  // Whether the worker is parked, and if so whether it watches for
  // stranded queues (see watch()) or sleeps until woken.
  parker::state parked_state() const noexcept { return parker_.now(); }
  // Its thief, as other thieves see it (see thief::last_attempt).
  const thief& stealing() const noexcept { return thief_; }
  // Sweeps this worker has started: moves every few nanoseconds while its
  // thread runs and has nothing to do, and between two batches while it
  // works. Still for a while: the thread is stuck in a batch, or is not
  // running at all (see thief::stuck).
  std::uint64_t sweeps() const noexcept { return sweeps_.get(); }
  // Whether its last sweep found nothing to do (and it has found nothing
  // since), parked or not: a sender may then claim its queues (see
  // runner::post_claimed). Written only when it changes.
  bool idle() const noexcept { return idle_.load(std::memory_order_relaxed); }
  // Whether its last defaults::hungry_after sweeps or more found nothing
  // (parked or not) and it has been given nothing since: it wants a share
  // of the work that runs elsewhere (see runner::hungry_queue). A lull
  // between two pieces of work makes a worker idle, not hungry.
  bool hungry() const noexcept { return hunger_.load(std::memory_order_relaxed) == hungry_now; }
  // Takes its hunger, for a sender about to post it a share: true for one
  // caller, once, and the worker is not hungry again before it has run
  // something (its share, or any other work). Any thread.
  bool take_hunger() noexcept;

 private:
  static void fiber_loop(runner& self);
  void loop();
  bool sweep();
  bool sweep_one(work_queue& q);
  void park();
  void rest();
  void wait_stood_down();
  void watch();
  void rescue_when_due();

  void set_idle(bool idle) noexcept;
  void become_hungry() noexcept;
  void found_work() noexcept;

  const bool stealing_;
  counter sweeps_;
  std::chrono::steady_clock::time_point next_rescue_{};  // see rescue_when_due
  std::uint64_t processed_at_look_ = 0;
  // On a line of its own: claimers read it, and the sweep count beside
  // it changes at every sweep.
  alignas(64) std::atomic<bool> idle_{false};
  // runner::not_hungry, hungry_now, or fed. The worker moves
  // it out of not_hungry and back to it; a sender moves it from
  // hungry_now to fed. executor::hungry_workers() counts hungry_now.
  std::atomic<std::uint8_t> hunger_{not_hungry};
  thief thief_;
};

}  // namespace tact::detail
