// Parking against posts and work stealing, under the C++ memory model: the
// protocol that src/executor/parking.pml checks with spin for interleavings
// of sequentially consistent steps, here with the orderings the code uses.
//
// The parking itself is the engine's: parker (src/executor/parker.hpp:
// park, sleep, wake), register_through and work_queue (post, gulp,
// register_waiter with its slot check), try_swap and the futex. The worker
// around it is the pool worker's loop cut down to one slot: sweep, steal,
// park (src/executor/pool_worker.cpp, whose executor, fibers and epochs
// are too big to run here). Parked means asleep on the futex until woken
// (watching for stranded queues, which would hide a lost wake-up after a
// while, is left out, as in the spin model). The futex never returns
// spuriously here, so a lost wake-up leaves a worker asleep for good:
// Relacy reports a deadlock, or the livelock of the thread waiting for the
// mail it strands.
//
// Two threads: a worker sweeps and parks while a thief steals its queue,
// giving it one with mail. The thief's swap and its load of the worker's
// state, and the worker's store of `parking` and its load of its slot, are
// sequentially consistent: either the thief sees the worker parking and
// wakes it, or the worker sees the new queue in its slot and registers on
// it (finding its mail). Three threads: a sender posts to both queues
// while both workers sweep, steal and park, as in the spin model; without
// the registration's slot check a late registration steals the thief's,
// and the thief sleeps on its own mail.
#include <tact/detail/atomic.hpp>

#include "executor/parker.hpp"
#include "executor/queue_swap.hpp"
#include "mail.hpp"
#include "model.hpp"
#include "support/cpu_relax.hpp"

namespace tact::detail {

// The model's worker (see above).
class worker final : public sleeper {
 public:
  worker(atomic<work_queue*>& slot, atomic<bool>& stopping,
         ::tact::model::post_office<2, 2>& office, bool slot_check)
      : slot_{slot}, stopping_{stopping}, office_{office}, slot_check_{slot_check} {}

  // A sweep of our slot.
  work_queue::gulp_result sweep() {
    work_queue& q = *slot_.load(std::memory_order_relaxed);
    if (q.looks_empty()) return work_queue::gulp_result::empty;
    const work_queue::gulp_result result = q.gulp();
    if (result == work_queue::gulp_result::taken) office_.process(q);
    return result;
  }

  bool steal_from(worker& victim) {
    work_queue* const q = victim.slot_.load(std::memory_order_relaxed);
    if (q == nullptr || q->looks_empty() || q->being_processed()) return false;
    return swap(victim, q);
  }
  // steal_from without looking at the queue first.
  bool give(worker& victim) { return swap(victim, victim.slot_.load(std::memory_order_relaxed)); }

  // As pool_worker::park, with one slot and no watching.
  void park() {
    const auto registered = [this] {
      if (slot_check_) return register_through(slot_, this);
      return slot_.load(std::memory_order_seq_cst)->register_waiter(this, nullptr);
    };
    const auto stopping = [this] { return stopping_.load(std::memory_order_seq_cst); };
    if (parker_.park(registered, stopping, parker::sleeping)) parker_.sleep(parker::sleeping);
  }

  void wake() noexcept override { parker_.wake(); }

  // As thief::steal_from after its swap.
  bool swap(worker& victim, work_queue* q) {
    if (!try_swap(slot_, victim.slot_, q)) return false;
    if (victim.parker_.now() != parker::running) victim.wake();
    return true;
  }

  // pool_worker::loop, with `victim` to steal from after an empty sweep,
  // until the system stops. A queue found busy is a spin: the pause lets
  // the worker processing it run, and the next look see that it is done.
  void run(worker* victim) {
    while (!stopping_.load(std::memory_order_seq_cst)) {
      switch (sweep()) {
        case work_queue::gulp_result::taken:
          continue;
        case work_queue::gulp_result::busy:
          cpu_relax();
          continue;
        case work_queue::gulp_result::empty:
          break;
      }
      if (victim != nullptr && steal_from(*victim)) continue;
      park();
    }
  }

 private:
  atomic<work_queue*>& slot_;
  atomic<bool>& stopping_;
  ::tact::model::post_office<2, 2>& office_;
  const bool slot_check_;
  parker parker_;
};

}  // namespace tact::detail

namespace {

using tact::detail::atomic;
using tact::detail::worker;
using tact::model::letter;
using tact::model::work_queue;

// Stops the system (executor::stop) once every letter has been delivered:
// sets stopping, then wakes every worker.
template <class Suite>
void stop_when_delivered(Suite& s, int letters) {
  while (s.office.delivered() < letters) tact::detail::model_yield();
  s.stopping.store(true, std::memory_order_seq_cst);
  for (worker& w : s.workers) w.wake();
}

// Shared by both suites: two workers, each owning one slot and one queue.
struct system {
  work_queue queues[2]{work_queue{1}, work_queue{1}};
  atomic<work_queue*> slots[2];
  atomic<bool> stopping{false};
  letter letters[2];
  tact::model::post_office<2, 2> office;
  worker workers[2];

  explicit system(bool slot_check)
      : workers{worker{slots[0], stopping, office, slot_check},
                worker{slots[1], stopping, office, slot_check}} {}

  void open() {
    office.open();
    for (int q = 0; q < 2; ++q) {
      slots[q].store(&queues[q], std::memory_order_relaxed);
      letters[q].from = q;
      letters[q].actor = q;
    }
  }
};

// Worker 0 has swept its queue, now empty, and parks, then sweeps once
// more when it stops parking; worker 1, the thief, swaps its own queue,
// which has a letter, for worker 0's (the real thief takes only a queue
// with mail; any queue will do for the race between the swap and the
// parking), and wakes worker 0 if it sees it parking.
struct give_a_queue : rl::test_suite<give_a_queue, 2>, system {
  give_a_queue() : system{true} {}

  void before() {
    open();
    office.post(queues[1], letters[1]);
  }

  void thread(unsigned index) {
    if (index == 0) {
      workers[0].park();
      workers[0].sweep();
    } else {
      workers[1].give(workers[0]);
    }
  }

  void after() { office.check({0, 1}); }
};

// Thread 2 posts two letters to queue 0, worker 0's, waking whom each post
// names, and stops the system once both are delivered; worker 1 tries once
// to steal, then both workers run until the system stops. Without the slot
// check: worker 0 finds nothing, parks and loads its slot; the first letter
// comes; worker 1 steals queue 0, runs the letter, parks and registers on
// queue 0; worker 0's late registration on queue 0 replaces worker 1's, so
// the second letter wakes worker 0, and worker 1 sleeps on it.
template <bool slot_check>
struct post_steal_park : rl::test_suite<post_steal_park<slot_check>, 3>, system {
  post_steal_park() : system{slot_check} {}

  void before() {
    open();
    letters[1].from = 0;
    letters[1].seq = 1;
    letters[1].actor = 0;
  }

  void thread(unsigned index) {
    if (index == 1) workers[1].steal_from(workers[0]);
    if (index < 2) return workers[index].run(nullptr);
    for (letter& l : letters) {
      const work_queue::sleepers woken = office.post(queues[0], l);
      if (woken.waiter != nullptr) woken.waiter->wake();
    }
    stop_when_delivered(*this, 2);
  }

  void after() { office.check({2, 0}); }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"parking against posts and stealing"};
  m.check<give_a_queue>("a parking worker given a queue: every interleaving", search::full());
  m.check<post_steal_park<true>>("a sender and two workers: up to 2 preemptions",
                                 search::bounded(2));
  m.check<post_steal_park<true>>("a sender and two workers: random", search::random(100000));
  m.mutant<give_a_queue>("mutant: the swap is acquire-release, not seq_cst", search::full(),
                         rl::test_result_deadlock,
                         "try_swap", std::memory_order_acq_rel);
  m.mutant<give_a_queue>("mutant: parker::park acquire-release, not seq_cst", search::full(),
                         rl::test_result_deadlock, "parker::park", std::memory_order_acq_rel);
  m.mutant<give_a_queue>("mutant: parker::now acquire, not seq_cst", search::full(),
                         rl::test_result_deadlock, "parker::now", std::memory_order_acquire);
  m.mutant<post_steal_park<false>>("mutant: no slot check in register_waiter", search::bounded(2),
                                   rl::test_result_livelock);
  return m.main(argc, argv);
}
