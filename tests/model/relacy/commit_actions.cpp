// The on_commit actions of a parallel actor, in commit order
// (src/transactional/ordered_actions.hpp): commits racing becomes on one
// actor each queue a batch of actions while they hold the behaviour
// slot's committing bit, install, then drain, as deliver() in
// src/transactional/dispatch.cpp does.
//
// Checks: every batch runs once (Relacy tracks their allocation: none
// leaks, none is freed twice), in commit order (each batch holds the value
// its commit installed, and the log of runs must read 1, 2, 3...), one at
// a time and each after the one before it (the log is plain memory
// written by every run, whichever thread drains: a run that another does
// not happen before is a data race); and the word is left empty.
//
// Abstracted: what a batch runs (one write to the log), the sends of a
// commit, the epochs (replaced behaviours are kept until the end).
#include <tact/detail/atomic.hpp>

#include "model.hpp"
#include "transactional/behaviour_slot.hpp"
#include "transactional/ordered_actions.hpp"

namespace {

using tact::detail::atomic;
using tact::detail::tx::behaviour_base;
using tact::detail::tx::behaviour_in;
using tact::detail::tx::cell;

class counter final : public behaviour_base {
 public:
  explicit counter(int value) { value_($) = value; }
  bool dispatch(const tact::tx::message&) const override { return true; }
  int value() const { return value_($); }

 private:
  rl::var<int> value_;
};

// Its number is written by its commit and read by whoever drains: a read
// the queueing does not happen before is a data race.
struct batch {
  explicit batch(int n) { number($) = n; }
  batch* next = nullptr;
  rl::var<int> number;  // the value its commit installed: its place in commit order
};

// How a commit queues its batch and drains: as the engine does; queued
// after the install, outside the committing bit (a mutant: out of order);
// or drained by a drainer that gives the bit up with a plain store, without
// looking for batches queued while it ran (a mutant: one is stranded).
enum class variant { engine, queued_late, no_recheck };

// drain_batches, changed in its last step (see variant::no_recheck).
template <class Run>
void drain_without_recheck(atomic<std::uintptr_t>& word, Run&& run) {
  using tact::detail::tx::draining;
  std::uintptr_t old = word.load(std::memory_order_relaxed);
  do {
    if ((old & draining) != 0 || old == 0) return;
  } while (!word.compare_exchange_strong(old, draining, std::memory_order_acq_rel));
  for (batch* b = tact::detail::tx::oldest_first<batch>(old); b != nullptr;)
    run(std::exchange(b, b->next));
  word.store(0, std::memory_order_release);
}

template <int Threads, variant how>
struct ordered_commits : rl::test_suite<ordered_commits<Threads, how>, Threads> {
  cell actor;
  rl::var<int> log[Threads];
  rl::var<int> logged;
  behaviour_base* replaced[Threads] = {};

  void before() {
    tact::detail::tx::install(actor, new counter{0});
    logged($) = 0;
  }

  void run(batch* b) {
    const int at = logged($);
    if (at < Threads) log[at]($) = b->number($);
    logged($) = at + 1;
    delete b;
  }

  void thread(unsigned self) {
    for (;;) {
      behaviour_base* const running = behaviour_in(tact::detail::tx::settled_slot(actor));
      const int number = static_cast<const counter*>(running)->value() + 1;
      auto* const next = new counter{number};
      if (!tact::detail::tx::claim(actor, running)) {
        next->release();  // lost the race: run again against the winner's behaviour
        continue;
      }
      auto* const b = new batch{number};
      if (how != variant::queued_late) tact::detail::tx::queue_batch(actor.actions, b);
      tact::detail::tx::install(actor, next);
      if (how == variant::queued_late) tact::detail::tx::queue_batch(actor.actions, b);
      const auto run_one = [this](batch* done) { run(done); };
      if (how == variant::no_recheck)
        drain_without_recheck(actor.actions, run_one);
      else
        tact::detail::tx::drain_batches<batch>(actor.actions, run_one);
      replaced[self] = running;
      return;
    }
  }

  void after() {
    RL_ASSERT(logged($) == Threads);
    for (int i = 0; i < Threads; ++i) RL_ASSERT(log[i]($) == i + 1);
    RL_ASSERT(actor.actions.load(std::memory_order_relaxed) == 0);
    behaviour_in(actor.slot.load(std::memory_order_relaxed))->release();
    for (behaviour_base* b : replaced) b->release();
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  using enum variant;
  tact::model::model m{"on_commit actions in commit order"};
  m.check<ordered_commits<2, engine>>("two commits with actions: up to 4 preemptions",
                                      search::bounded(4));
  m.check<ordered_commits<3, engine>>("three: up to 1 preemption", search::bounded(1));
  m.check<ordered_commits<3, engine>>("three: random", search::random(100000));
  m.mutant<ordered_commits<2, queued_late>>("mutant: batches queued after the install",
                                            search::bounded(3), rl::test_result_user_assert_failed);
  m.mutant<ordered_commits<2, no_recheck>>("mutant: the drainer leaves without looking again",
                                           search::bounded(3), rl::test_result_user_assert_failed);
  m.mutant<ordered_commits<2, engine>>("mutant: drain relaxed", search::bounded(3),
                                       rl::test_result_data_race, "drain_batches",
                                       std::memory_order_relaxed);
  m.mutant<ordered_commits<2, engine>>("mutant: queue relaxed", search::bounded(3),
                                       rl::test_result_data_race, "queue_batch",
                                       std::memory_order_relaxed);
  return m.main(argc, argv);
}
