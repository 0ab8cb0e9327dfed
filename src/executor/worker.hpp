#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <tact/detail/atomic.hpp>
#include <tact/detail/envelope.hpp>

#include "executor/counters.hpp"
#include "executor/fibers.hpp"
#include "executor/held_queue.hpp"
#include "executor/victims.hpp"
#include "mailbox/work_queue.hpp"

namespace tact::detail {

class executor;

// One executor thread. It owns a contiguous block of slots in the
// executor's ownership array and sweeps them round robin: test each queue
// without the lock, gulp it, process the batch locally (Cforall thesis, "CFA
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
  // go through the mailbox, which is gulped after the batch is done. A
  // sender that is not an actor of this queue holds appends (see
  // appends_held). A queue held by a waiting behaviour (see suspend()) has
  // no budget: the held batch is drained before its mailbox is taken in.
  // Counted per batch, from the budget spent, not per send.
  bool try_append(const work_queue& q, void* target, void* message, run_fn run) {
    if (current_ != &q || budget_ == 0 || appends_held_ != 0) return false;
    current_->batch().push(envelope{target, message, run});
    --budget_;  // after the push, which may throw: the budget counts what was sent
    return true;
  }

  // While one is alive on this worker's thread, sends take the mailbox even
  // to the queue in hand. For code that sends for an actor that is not an
  // actor of that queue: a parallel transactional actor runs on whichever
  // queue its message came to, so an earlier send of its own may wait in
  // this queue's mailbox, sent from another queue, and joining the batch
  // would overtake it. A count, not a flag: an on_commit action holding
  // appends may be suspended (an ask) while other contexts take and
  // release holds on this worker, in any order; a resumed behaviour has
  // no budget anyway.
  class appends_held {
   public:
    explicit appends_held(worker& w) noexcept : w_{w} { ++w_.appends_held_; }
    ~appends_held() { --w_.appends_held_; }
    appends_held(const appends_held&) = delete;
    appends_held& operator=(const appends_held&) = delete;

   private:
    worker& w_;
  };

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

  // The deterministic executor (see stepper), on the thread driving it:
  // runs the next envelope of q's batch as this worker. q was gulped by
  // the caller and stays being_processed until its batch is empty; then
  // this finishes q. May nest: a behaviour that waits runs steps of other
  // queues inside its own.
  void step(work_queue& q);

  // ---- behaviours that wait (an ask inside a behaviour; suspension.cpp) ----

  // What a suspended behaviour waits for. Lives with the waiter.
  struct wake_condition {
    enum status { waiting, soon, ready };
    // Polled on the worker's thread: ready once the behaviour may go on
    // (its event happened, or `expired`, the deadline has passed, and it
    // gave up); soon if the event is moments away (the worker must not
    // sleep). Whoever makes it ready calls wake() on the worker after
    // making poll able to see it.
    status (*poll)(wake_condition& self, bool expired) noexcept;
    std::chrono::steady_clock::time_point deadline;
  };

  // Only on this worker's thread: whether the code running is a behaviour
  // that suspend() may suspend (one run from a batch by a pool worker or a
  // guest; a sponsor's thread belongs to the program and does not switch).
  bool can_suspend() const noexcept { return suspends_ && current_ != nullptr; }
  // Only when can_suspend(): suspends the running behaviour until
  // `c.poll` is ready, and runs other work meanwhile. Its actor stays busy
  // (its later messages wait) and its queue stays being_processed, held
  // by this worker, which runs the queue's other actors in the meantime
  // (see held_queue). Throws (std::bad_alloc) only before it suspends.
  void suspend(wake_condition& c);
  // Behaviours suspended here, or queues held: a guest with these must not
  // be released (see executor::release_guest).
  bool busy() const noexcept { return !suspended_.empty() || !held_.empty(); }
  // A guest's lender: sleeps until a post to a held queue, an answer to
  // one of its suspended behaviours or to `also` (its own ask, whose
  // answer wakes this worker), or the earliest deadline, whichever first.
  void wait(wake_condition* also = nullptr);
  // Guests, around each lending (see executor::take_guest).
  void lent() noexcept { fibers_.enter(); }
  void returned() noexcept { fibers_.leave(); }

  // Only on this worker's thread: one of the queues this worker owns now,
  // round robin, for messages that may run on any queue (transactional
  // sends): they stay on this worker unless a thief takes their queue.
  std::uint32_t next_own_queue() noexcept;

  executor& owner() const noexcept { return owner_; }
  std::uint32_t index() const noexcept { return index_; }
  // One of the executor's own threads (not a guest or a sponsor's runner).
  bool pooled() const noexcept;

  // Any thread: whether this worker is parked, and if so whether it
  // watches for stranded queues (see watch()) or sleeps until woken.
  bool is_watching() const noexcept { return state_.load(std::memory_order_seq_cst) == watching; }
  bool is_sleeping() const noexcept { return state_.load(std::memory_order_seq_cst) == sleeping; }

  worker_counters counters;

 private:
  // waiting: parked with behaviours suspended (see wait()); not counted
  // as parked, since the system is not quiescent while they wait.
  enum state : std::uint32_t { running, parking, watching, sleeping, waiting };

  // A behaviour suspended here; lives on the suspended context's stack.
  struct suspended_behaviour {
    wake_condition* condition;
    fiber_pool::context* context;
  };

  static void loop_on_fiber(void* self);
  void loop();
  void guest_loop();
  bool sweep();
  std::uint64_t process(work_queue& q);
  bool resume_ready();
  std::uint64_t drain_all_held();
  std::uint64_t drain_held(work_queue& q, std::uint32_t index);
  void run_held(work_queue& q, std::uint32_t index, const envelope& e);
  void run_stash(work_queue& q, std::uint32_t index, void* target);
  std::uint64_t after_resume(work_queue& q, std::uint32_t index, void* target);
  held_queue* find_held(const work_queue& q) noexcept;
  void unpin() noexcept;
  bool steal();
  bool steal_from(std::uint32_t victim);
  std::optional<std::uint32_t> worth_stealing(const worker& victim) noexcept;
  bool stuck(const worker& victim) noexcept;
  std::uint32_t slot_to_give() noexcept;
  std::optional<std::uint32_t> find_stranded_work() noexcept;
  bool register_as_waiter() noexcept;
  void park();
  void watch();
  void sleep() noexcept;

  executor& owner_;
  const std::uint32_t index_;
  const std::uint32_t first_slot_;
  const std::uint32_t last_slot_;
  const std::uint32_t local_batch_;
  const bool stealing_;
  const bool suspends_;  // a pool worker or a guest (see can_suspend())
  std::uint32_t ticket_;
  work_queue* current_ = nullptr;  // queue whose batch is being processed
  std::uint32_t current_index_ = no_queue;  // ... and its index
  std::uint32_t spread_ = 0;  // next own slot for next_own_queue(); a guest's next queue for help()
  std::uint32_t budget_ = 0;       // same-queue appends left for this batch
  std::uint32_t appends_held_ = 0;  // appends_held alive: no appends at all
  void* running_target_ = nullptr;  // target of the envelope being run
  // The behaviour just run was suspended and resumed: its batch was handed
  // over (see held_queue). Kept per context: suspend() clears it for the
  // context that takes over and sets it when resumed.
  bool resumed_ = false;
  std::uint32_t give_ = 0;         // next own slot to offer in a swap
  victim_picker victims_;
  // Per worker, its gulp count when this one, as a thief, last saw it
  // change, and when (see stuck()).
  struct victim_progress {
    std::uint64_t gulps = ~std::uint64_t{0};
    std::chrono::steady_clock::time_point since{};
  };
  std::vector<victim_progress> progress_;
  atomic<std::uint32_t> state_{running};
  void (*notify_)(void*) noexcept = nullptr;
  // Behaviours that wait: the contexts they wait on, their conditions, the
  // queues they hold (see suspension.cpp).
  fiber_pool fibers_;
  std::vector<suspended_behaviour*> suspended_;
  std::vector<std::unique_ptr<held_queue>> held_;
  std::vector<std::unique_ptr<held_queue>> spare_held_;  // released, kept for reuse
  static constexpr std::uint32_t deadline_polls = 64;
  std::uint32_t polls_to_deadlines_ = deadline_polls;  // see resume_ready()
  bool open_pass_ = false;  // a guest whose pass stays open while it is busy
  void* notify_context_ = nullptr;
  // When this worker last tried to steal (steady clock ticks), for the
  // longest-victim policy. Written only by this worker.
  std::atomic<std::int64_t> last_steal_attempt_{0};
};

// The worker running on this thread, if any (of whichever executor).
// constinit: no dynamic initialization, so reading it needs no guard call.
extern constinit thread_local worker* this_thread_worker __attribute__((tls_model("initial-exec")));

}  // namespace tact::detail
