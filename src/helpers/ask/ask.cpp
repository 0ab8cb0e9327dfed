#include <stdexcept>
#include <thread>

#include <tact/actor_system.hpp>
#include <tact/build_config.hpp>
#include <tact/detail/reply_slot.hpp>
#include <tact/detail/tx_core.hpp>

#include "executor/executor.hpp"
#include "helpers/ask/askers.hpp"
#include "helpers/timers/timer_service.hpp"
#include "support/futex.hpp"

// Waiting for a reply (xTActors, ASK), by whoever asks:
//  * a behaviour (run by a worker, or by a guest): suspended on its fiber
//    (runner::suspend) while its runner runs other work; the answer wakes
//    that runner, which resumes the behaviour;
//  * a thread outside the actor world: lent to the executor as a guest
//    (see lending), it runs queued batches until its answer is there, and
//    sleeps on the slot when there is nothing to run, so an idle asker
//    costs no CPU. If a behaviour it ran is suspended, it stays that
//    behaviour's guest until the behaviour is done;
//  * a sponsor's thread (the program's own): it sleeps on the slot.
// Both kinds of thread outside the pool are listed while they wait, so
// that stop() can end their asks (see waiting_askers).
namespace tact::detail {

struct reply_access {
  static std::atomic<std::uint32_t>& state(reply_base& slot) noexcept { return slot.state_; }
  static void host(reply_base& slot, runner* r) noexcept { slot.host_ = r; }
};

namespace {

// What a suspended asker waits for: its slot settled, or its deadline.
struct slot_condition : wake_condition {
  reply_base* slot;
};

// On the host runner's thread. Sequentially consistent load: see
// runner::wait.
wake_condition::status poll_slot(wake_condition& c, bool expired) noexcept {
  std::atomic<std::uint32_t>& state = reply_access::state(*static_cast<slot_condition&>(c).slot);
  std::uint32_t seen = state.load(std::memory_order_seq_cst);
  // Giving up is a CAS from suspended: an answer that claimed first wins.
  if (expired && seen == reply_base::suspended &&
      state.compare_exchange_strong(seen, reply_base::abandoned, std::memory_order_seq_cst))
    return wake_condition::ready;
  if (seen == reply_base::settling) return wake_condition::soon;
  if (seen == reply_base::suspended) return wake_condition::waiting;
  return wake_condition::ready;
}

reply_base::state settled(std::atomic<std::uint32_t>& state) noexcept {
  for (;;) {
    const std::uint32_t s = state.load(std::memory_order_acquire);
    if (s != reply_base::settling) return static_cast<reply_base::state>(s);
    std::this_thread::yield();  // an answer is being stored: moments away
  }
}

// A behaviour asks: it is suspended until the answer or the deadline.
reply_base::state await_suspended(runner& self, reply_base& slot,
                                  std::chrono::steady_clock::time_point deadline) {
  std::atomic<std::uint32_t>& state = reply_access::state(slot);
  reply_access::host(slot, &self);
  // Publishes host_ along with the state: the answer reads it after its
  // claim. If the answer came first there is nothing to wait for.
  std::uint32_t expected = reply_base::pending;
  if (state.compare_exchange_strong(expected, reply_base::suspended, std::memory_order_seq_cst)) {
    slot_condition condition{{&poll_slot, deadline}, &slot};
    self.suspend(condition);
  }
  return settled(state);
}

// Whether a slot in state `s` still waits for its answer.
bool still_open(std::uint32_t s) noexcept {
  return s == reply_base::pending || s == reply_base::waiting || s == reply_base::suspended;
}

// A helping asker's limit: its slot no longer open (answered, abandoned).
bool slot_settled(const void* slot) noexcept {
  return !still_open(reply_access::state(*static_cast<reply_base*>(const_cast<void*>(slot)))
                         .load(std::memory_order_acquire));
}

// A thread outside the actor world (or a sponsor's) asks.
reply_base::state await_helping(executor& ex, reply_base& slot,
                                std::chrono::steady_clock::time_point deadline) {
  std::atomic<std::uint32_t>& state = reply_access::state(slot);
  // Until we return: stop() ends the ask if it is still open then.
  const waiting_askers::entry waiting{askers_of(ex.owner()), slot};
  lending& lent = ex.lent();
  // Helping stops between two messages once the answer is there or the
  // deadline has passed: the rest of a batch goes back to its queue.
  const help_limit limit{&slot_settled, &slot, deadline};
  guest* helper = nullptr;  // held across rounds while behaviours it ran wait
  for (;;) {
    const std::uint32_t now_state = state.load(std::memory_order_acquire);
    if (now_state == reply_base::settling) {
      std::this_thread::yield();  // an answer is being stored: moments away
      continue;
    }
    const bool open = still_open(now_state);
    if (!open && helper == nullptr) return static_cast<reply_base::state>(now_state);
    if (helper == nullptr) helper = lent.take_guest();
    if (helper != nullptr) {
      const bool worked = helper->help(&limit);
      if (!helper->busy()) {
        lent.release_guest(*helper);
        helper = nullptr;
        // Our slot may name it as the runner to wake: no longer. host_ is
        // written only while the slot is pending or waiting, so an answer
        // that claimed from suspended reads the guest it was written with.
        std::uint32_t named = reply_base::suspended;
        if (state.load(std::memory_order_relaxed) == named)
          state.compare_exchange_strong(named, reply_base::pending, std::memory_order_relaxed);
      }
      if (worked || (!open && helper == nullptr)) continue;
    }
    if (!open) {
      // Answered, but behaviours this thread ran still wait: it stays
      // their guest until they are done (each waits at most its timeout).
      helper->wait();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    std::uint32_t expected = now_state;
    if (now >= deadline) {
      if (state.compare_exchange_strong(expected, reply_base::abandoned,
                                        std::memory_order_acquire) &&
          helper == nullptr)
        return reply_base::abandoned;
      continue;  // answered just now, or the guest is still busy
    }
    if (helper != nullptr) {
      // Behaviours this thread ran wait: their answers, and ours, wake the
      // guest, so we sleep there (see runner::wait).
      if (now_state != reply_base::suspended) {
        reply_access::host(slot, helper);
        if (!state.compare_exchange_strong(expected, reply_base::suspended,
                                           std::memory_order_seq_cst))
          continue;
      }
      slot_condition own{{&poll_slot, deadline}, &slot};
      helper->wait(&own);
      continue;
    }
    // Announce the sleep, so that the answer wakes us; work that arrives
    // meanwhile is the workers' to run. The kernel re-checks `waiting`.
    if (now_state == reply_base::waiting ||
        state.compare_exchange_strong(expected, reply_base::waiting, std::memory_order_relaxed))
      futex_wait_for(state, reply_base::waiting, deadline - now);
  }
}

// On a deterministic executor, by whoever asks (the driving thread, or a
// behaviour in a step): runs steps until the answer; when none is left,
// time moves to the next timer due before the deadline (which may answer),
// or to the deadline. One thread: nothing can settle the slot meanwhile.
reply_base::state await_stepping(stepper& steps, timer_service& timers, reply_base& slot,
                                 std::chrono::steady_clock::time_point deadline) {
  std::atomic<std::uint32_t>& state = reply_access::state(slot);
  for (;;) {
    std::uint32_t seen = state.load(std::memory_order_acquire);
    if (seen != reply_base::pending) return static_cast<reply_base::state>(seen);
    if (steps.run_one()) continue;
    if (const auto due = timers.next_due(); due && *due <= deadline) {
      timers.advance_to(*due);
      continue;
    }
    // Nothing left can answer. An ask with no deadline gives up here too,
    // without moving the clock to its end.
    if (deadline != std::chrono::steady_clock::time_point::max()) timers.advance_to(deadline);
    if (state.compare_exchange_strong(seen, reply_base::abandoned, std::memory_order_acquire))
      return reply_base::abandoned;
  }
}

}  // namespace

// Saturating: a timeout past the clock's end (nanoseconds::max(), say)
// means no deadline, where `now + timeout` would overflow into the past.
std::chrono::steady_clock::time_point ask_deadline(executor& ex, std::chrono::nanoseconds timeout) {
  // The first use of the system by every ask: an ask of an actor whose
  // system is gone (a finished actor outliving it) is caught here.
  if constexpr (build::checks)
    if (!live(&ex))
      lifetime_violated(
          "an ask was made on an actor_system that had been destroyed (of a finished actor that "
          "outlived it, say); once a system is gone, nothing may be asked of its actors");
  using clock = std::chrono::steady_clock;
  const clock::time_point now = timers_of(ex.owner()).now();
  if (timeout >= clock::time_point::max() - now) return clock::time_point::max();
  return now + timeout;
}

void reply_base::settle(state outcome) noexcept {
  // A suspended asker's runner is woken before the outcome is published:
  // until then the asker cannot resume, so that runner (and its system) is
  // still there, while after the store we touch nothing but the slot, which
  // we share. The runner, woken, finds the slot settling and does not
  // sleep (runner::wait) until the store lands. An answer given on the
  // host's own thread needs no wake-up: the host is running, and polls its
  // waiting behaviours before it sleeps.
  if (claimed_from_ == suspended && host_ != this_thread_runner) host_->wake();
  // Release: the asker that reads the outcome sees the value or error.
  state_.store(outcome, std::memory_order_release);
  if (claimed_from_ == waiting) futex_wake_all(state_);
  // Nobody waits on a relayed slot: whoever settled it holds it, so it is
  // still there.
  if (relay_ != nullptr) relay_(*this, outcome);
}

void refuse_ask_that_cannot_wait() {
  if (tx::self() != nullptr)
    throw std::logic_error{
        "tact: ask called inside a transactional handler, whose effects are staged until it "
        "returns; send the request with tx::self() as the customer and handle the reply as a "
        "message"};
  // A runner whose behaviours may suspend (a pool worker, a guest) runs
  // no code of the program's outside them.
  if (const runner* self = this_thread_runner;
      self != nullptr && self->suspends() && !self->can_suspend())
    throw std::logic_error{
        "tact: ask called on a worker thread outside any behaviour; a worker cannot wait there"};
}

reply_base::state await_reply(executor& ex, reply_base& slot,
                              std::chrono::steady_clock::time_point deadline) {
  if (stepper* steps = ex.stepping())
    return await_stepping(*steps, timers_of(ex.owner()), slot, deadline);
  if (runner* self = this_thread_runner; self != nullptr && self->can_suspend())
    return await_suspended(*self, slot, deadline);
  return await_helping(ex, slot, deadline);
}

}  // namespace tact::detail
