#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include <tact/detail/envelope.hpp>

#include "executor/counters.hpp"
#include "executor/victims.hpp"
#include "mailbox/work_queue.hpp"

namespace tact::detail {

class executor;

// One executor thread. It owns a contiguous block of slots in the
// executor's ownership array and sweeps them round robin: test each queue
// without the lock, gulp it, process the batch locally (seed 000, "CFA
// Executor"). When its sweeps keep finding nothing it tries, now and then,
// to steal a queue from another worker (see run()); after enough empty
// sweeps it parks until a send wakes it.
class worker {
 public:
  // `victim_groups`: for steal_policy::locality (see victim_picker).
  worker(executor& owner, std::uint32_t index, std::uint32_t first_slot, std::uint32_t last_slot,
         std::vector<std::vector<std::uint32_t>> victim_groups);

  // The thread's body: returns once the executor is stopping.
  void run();

  // Any thread: makes a parked (or parking) worker sweep again; for a
  // sponsor's runner, tells the sponsor (see set_notify).
  void wake() noexcept;
  // A sponsor's runner: wake() calls notify(context) instead of waking a
  // thread of the pool.
  void set_notify(void (*notify)(void*) noexcept, void* context) noexcept {
    notify_ = notify;
    notify_context_ = context;
  }
  // A sponsor's runner, on the sponsor's thread: runs batches of q (its
  // sponsor's queue) until q is empty, then registers as q's waiter, so
  // that the next send to q calls wake(). Returns the messages it ran.
  std::uint64_t drain(work_queue& q);

  // Only on this worker's thread. A send to the queue whose batch this
  // worker is processing joins that batch directly, with no lock, while
  // the per-gulp budget lasts. FIFO per sender holds: every earlier send
  // from an actor of this queue is already in this batch or was processed
  // before it, and once the budget is spent all later sends of this batch
  // go through the mailbox, which is gulped after the batch is done.
  // Counted per batch, from the budget spent, not per send.
  bool try_append(const work_queue& q, void* target, void* message, run_fn run) {
    if (current_ != &q || budget_ == 0) return false;
    --budget_;
    current_->batch().push(envelope{target, message, run});
    return true;
  }

  // Only on this worker's thread: the queue for the next actor created by
  // a behaviour here (round robin over all queues, starting in our block).
  std::uint32_t next_ticket() noexcept;

  // Only on this worker's thread: the index of the queue whose batch is
  // being processed, or no_queue between batches.
  static constexpr std::uint32_t no_queue = ~std::uint32_t{0};
  std::uint32_t current_queue() const noexcept { return current_index_; }

  // A guest (a thread lent to the executor by a caller waiting for an
  // answer, see executor::take_guest): runs one batch of any queue that has mail,
  // on the calling thread, as this worker. False if it found none. Guests
  // own no queues; they gulp as owners do, so being_processed keeps every
  // classic actor to one message at a time.
  bool help();

  // Only on this worker's thread: one of the queues this worker owns now,
  // round robin, for messages that may run on any queue (transactional
  // sends): they stay on this worker unless a thief takes their queue.
  std::uint32_t next_own_queue() noexcept;

  executor& owner() const noexcept { return owner_; }
  std::uint32_t index() const noexcept { return index_; }

  // Any thread: whether this worker is parked, and if so whether it
  // watches for stranded queues (see watch()) or sleeps until woken.
  bool is_watching() const noexcept { return state_.load(std::memory_order_seq_cst) == watching; }
  bool is_sleeping() const noexcept { return state_.load(std::memory_order_seq_cst) == sleeping; }

  worker_counters counters;

 private:
  enum state : std::uint32_t { running, parking, watching, sleeping };

  bool sweep();
  std::uint64_t process(work_queue& q);
  bool steal();
  bool steal_from(std::uint32_t victim);
  std::optional<std::uint32_t> worth_stealing(const worker& victim) noexcept;
  bool stuck(const worker& victim) noexcept;
  std::uint32_t slot_to_give() noexcept;
  std::optional<std::uint32_t> find_stranded_work() noexcept;
  void park();
  void watch();
  void sleep() noexcept;

  executor& owner_;
  const std::uint32_t index_;
  const std::uint32_t first_slot_;
  const std::uint32_t last_slot_;
  const std::uint32_t local_batch_;
  const bool stealing_;
  std::uint32_t ticket_;
  work_queue* current_ = nullptr;  // queue whose batch is being processed
  std::uint32_t current_index_ = no_queue;  // ... and its index
  std::uint32_t spread_ = 0;  // next own slot for next_own_queue(); a guest's next queue for help()
  std::uint32_t budget_ = 0;       // same-queue appends left for this batch
  std::uint32_t give_ = 0;         // next own slot to offer in a swap
  victim_picker victims_;
  // Per worker, its gulp count when this one, as a thief, last saw it
  // change, and when (see stuck()).
  struct victim_progress {
    std::uint64_t gulps = ~std::uint64_t{0};
    std::chrono::steady_clock::time_point since{};
  };
  std::vector<victim_progress> progress_;
  std::atomic<std::uint32_t> state_{running};
  void (*notify_)(void*) noexcept = nullptr;
  void* notify_context_ = nullptr;
  // When this worker last tried to steal (steady clock ticks), for the
  // longest-victim policy. Written only by this worker.
  std::atomic<std::int64_t> last_steal_attempt_{0};
};

// The worker running on this thread, if any (of whichever executor).
// constinit: no dynamic initialization, so reading it needs no guard call.
extern constinit thread_local worker* this_thread_worker __attribute__((tls_model("initial-exec")));

}  // namespace tact::detail
