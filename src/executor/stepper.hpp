#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <tact/detail/envelope.hpp>

#include "executor/runner.hpp"

namespace tact::detail {

class executor;
class work_queue;

// How a stepping executor picks the next queue (see stepper).
struct step_plan {
  enum class policy { random, pct };
  policy kind = policy::random;
  std::uint64_t seed = 0;
  std::uint32_t depth = 3;     // pct: change points + 1
  std::uint64_t steps = 10'000;  // pct: the run's expected length
};

// The deterministic executor: the executor's queues, run by one runner
// (the system's one worker) on whichever thread calls run_one(), one
// message per step. Which
// queue runs next is the plan's choice among the queues that have a
// message, drawn from a generator seeded by the plan alone, so a run is a
// function of its seed and of what the program does between steps.
//
// A queue chosen for the first time since it was last empty is gulped as a
// worker would gulp it, and stays being_processed until its batch is
// empty; between two of its messages other queues may run, as they would
// on other workers. A step that waits (an ask inside a behaviour) runs
// nested steps; the queues of the steps in progress are not chosen
// meanwhile, so an actor still runs one message at a time.
class stepper {
 public:
  stepper(executor& ex, const step_plan& plan);

  const step_plan& plan() const noexcept { return plan_; }
  // The runner that runs the steps: worker 0 of the system.
  const runner& stepping_runner() const noexcept { return runner_; }
  // Runs one message; false if no queue that may run has one.
  bool run_one();
  // Runs queue `index`'s next message; false if it has none or a step of
  // it is in progress.
  bool run_queue(std::uint32_t index);
  std::uint64_t steps() const noexcept { return steps_; }
  // From now on runs nothing: run_one() and run_queue() return false.
  void halt() noexcept { halted_ = true; }
  bool halted() const noexcept { return halted_; }

  // The `nth` envelope queued in queue `index` (the batch taken, then the
  // mailbox) whose target is `target`; nullptr if there is none.
  const envelope* queued(std::uint32_t index, const void* target, std::uint64_t nth);
  // How many envelopes of queue `index` run before the first whose target
  // is `target`; nullopt if none has.
  std::optional<std::uint64_t> position(std::uint32_t index, const void* target);

 private:
  // Calls f(envelope, position) on queue `index`'s envelopes in the order
  // they will run, until f returns true; returns that envelope.
  template <class F>
  const envelope* find(std::uint32_t index, F&& f);
  bool may_run(std::uint32_t index) const noexcept;
  std::uint32_t choose(const std::vector<std::uint32_t>& ready);
  std::uint64_t next_random() noexcept;

  executor& ex_;
  runner runner_;
  const step_plan plan_;
  std::uint64_t random_state_;
  std::uint64_t steps_ = 0;
  bool halted_ = false;
  std::vector<bool> running_;  // a step of this queue is in progress
  std::vector<std::uint32_t> priority_;      // pct: per queue, higher first
  std::vector<std::uint64_t> change_points_;  // pct: steps at which to demote
  std::vector<std::uint32_t> ready_;          // scratch for run_one
};

}  // namespace tact::detail
