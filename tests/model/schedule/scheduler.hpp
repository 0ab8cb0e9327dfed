#pragma once

// A cooperative scheduler for engine code built with schedule_atomic.hpp
// as its atomic (see tact/detail/atomic.hpp): each thread is a
// Boost.Context fiber, and every atomic operation of the engine first
// calls schedule_point(), where the scheduler picks which thread runs
// next. The choice is a function of a seed, so a failing schedule replays
// exactly.
//
// Strategies: random (any runnable thread, uniformly), and PCT (Burckhardt
// et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding
// Bugs"): threads get random distinct priorities, the highest runnable one
// runs, and at `depth - 1` random steps the running thread drops to the
// lowest priority, so that bugs needing a few preemptions at particular
// points are found with good probability. A spinning thread (a pause in a
// spin loop, a futex wait) also drops to the lowest priority, or PCT would
// run it forever.
//
// Runs on the calling thread only; the engine code sees one thread at a
// time, switching only at its atomic operations.

#include <boost/context/fiber.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tact::model {

enum class strategy { random, pct };

class scheduler {
 public:
  // PCT: `depth` - 1 priority changes, at steps up to `horizon` (about
  // how long a run is). `steps`: the longest run; longer is reported as a
  // livelock.
  scheduler(std::uint64_t seed, strategy how, std::uint32_t horizon = 200, std::uint32_t depth = 3,
            std::uint32_t steps = 100000);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // A thread, started by run().
  void spawn(std::function<void()> body);
  // Runs the threads until all have returned, one fails, or the step
  // limit is reached; `invariant` is checked before every step. Returns
  // the failure, or an empty string.
  std::string run(const std::function<std::string()>& invariant = {});

  // From a thread: records a failure and never returns.
  [[noreturn]] void fail(std::string what);
  // The scheduler of the threads now running, if any.
  static scheduler* current() noexcept;
  // See tact::detail::model::schedule_point.
  void point(bool spinning) noexcept;

 private:
  struct thread {
    std::function<void()> body;
    boost::context::fiber fiber;  // the thread, while suspended
    bool done = false;
    std::int64_t priority = 0;
  };

  std::size_t pick();

  std::mt19937_64 random_;
  const strategy how_;
  const std::uint32_t step_limit_;
  std::vector<std::unique_ptr<thread>> threads_;
  std::vector<std::uint32_t> change_points_;  // PCT: steps where the runner drops
  std::int64_t lowest_ = 0;                   // PCT: the lowest priority given so far
  std::uint32_t steps_ = 0;
  thread* running_ = nullptr;
  boost::context::fiber back_;  // the scheduler, while a thread runs
  std::string failure_;
  bool leak_ = false;  // a run failed: its threads cannot be unwound safely
};

}  // namespace tact::model
