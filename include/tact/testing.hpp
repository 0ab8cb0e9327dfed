#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include <tact/actor_system.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/export.hpp>
#include <tact/send.hpp>

// Testing actors deterministically: a system that runs on the thread that
// drives it, one message per step, in an order a seed decides, with a
// virtual clock for timers and ask timeouts. The same seed replays the
// same run exactly, so a failure found under one schedule is a failure you
// can debug; many seeds explore many interleavings. See docs/testing.md.
namespace tact::testing {

// How the next message is chosen among the work queues that have one. A
// queue is the unit of choice: messages in one queue keep their order, as
// on the real executor, so a classic actor still receives one sender's
// messages in send order. Give each actor its own queue (the default
// configuration has many more queues than a test has actors) and every
// interleaving of actors is reachable.
struct schedule {
  enum class policy {
    random,  // uniformly among the queues with a message
    pct,     // probabilistic concurrency testing: priorities and change points
  };
  policy kind = policy::random;
  // The run's seed. Unset: TACT_SEED from the environment if set, else a
  // fresh random one (see deterministic_system::seed()).
  std::optional<std::uint64_t> seed{};
  // PCT: bugs of depth up to `depth` (orderings of that many events) are
  // found with probability at least 1 / (queues * steps^(depth - 1)) per
  // run, if the run takes at most `steps` steps.
  std::uint32_t depth = 3;
  std::uint64_t steps = 10'000;
};

// The default configuration of a deterministic system: one worker (the
// driving thread) and 256 queues.
TACT_API system_config deterministic_config();

// An actor_system whose messages run only when the test says so, on the
// calling thread. Spawn actors and send to them as on any system; then
// run_one(), run(), or look at what waits with next_message() first.
// ask() from the driving thread runs the schedule until the answer comes;
// if the system goes idle first, virtual time moves to the next timer due
// before the ask's deadline, or to the deadline (a timeout). An ask inside
// a behaviour does the same while the asking actor's queue waits.
//
// Single-threaded: only the thread that created it may use it, and
// behaviours must not start threads that send to it. Sponsors need
// threads and are not available here (std::logic_error).
//
// If the test fails with an exception (a REQUIRE of Catch2), the
// destructor prints the seed, so `TACT_SEED=<seed>` replays the run.
class TACT_API deterministic_system : public actor_system {
 public:
  explicit deterministic_system(schedule how = {}, system_config config = deterministic_config());
  ~deterministic_system();

  // The seed this run uses.
  std::uint64_t seed() const noexcept;

  // Runs one message, chosen by the schedule. False if no message is
  // queued. (A transactional commit's run of sends to one serialized
  // actor is queued as one entry and runs, and counts, as one message
  // here and in run() and steps().)
  bool run_one();
  // Runs messages until none is queued; returns how many ran. Virtual
  // time does not move: timers due later stay pending.
  std::uint64_t run();
  // Messages run so far.
  std::uint64_t steps() const noexcept;

  // ---- virtual time ----
  std::chrono::steady_clock::time_point now() const noexcept;
  // Moves the clock forward by `by`, firing (posting) every timer that
  // comes due on the way, in due order; runs no message.
  void advance_time(std::chrono::nanoseconds by);
  // Moves the clock to the earliest pending timer and fires it, with any
  // due at the same instant: what a timeout widget or an ask deadline
  // waits for. False if no timer is pending.
  bool trigger_timeout();
  // Timers started and not yet fired for good or cancelled.
  std::size_t pending_timers();

  // ---- inspection (classic actors) ----
  // Sends of a timer are queued as the timer's firing, which delivers its
  // message when it runs: they are not seen here.

  // The next message queued for `receiver`, if it is an M: a look before
  // it is received, without running anything. nullptr if none is queued
  // or the next one is of another type (or a poison pill).
  template <class M, class A>
  requires std::derived_from<A, actor> && receives<A, M> M* next_message(A& receiver) {
    const detail::envelope* e = queued(queue_of(receiver), std::addressof(receiver), 0);
    if (e == nullptr || e->run != &detail::deliver<A, M>) return nullptr;
    return static_cast<M*>(e->message);
  }
  // Messages queued for `receiver`.
  template <class A>
  requires std::derived_from<A, actor> std::size_t queued_for(A& receiver) {
    std::size_t n = 0;
    while (queued(queue_of(receiver), std::addressof(receiver), n) != nullptr) ++n;
    return n;
  }
  // Runs `receiver`'s queue up to and including its next message
  // (messages to other actors queued before it in the same queue run
  // first, as they would anyway). False if none is queued for it.
  template <class A>
  requires std::derived_from<A, actor> bool deliver_next(A& receiver) {
    return deliver_next(queue_of(receiver), std::addressof(receiver));
  }

 private:
  template <class A>
  static std::uint32_t queue_of(A& receiver) noexcept {
    return detail::actor_access::queue_of(receiver);
  }
  // The `nth` envelope queued in `queue` for `target`, or nullptr.
  const detail::envelope* queued(std::uint32_t queue, const void* target, std::size_t nth);
  bool deliver_next(std::uint32_t queue, const void* target);

  struct run_state;
  std::unique_ptr<run_state> state_;
};

}  // namespace tact::testing
