#include <stdexcept>
#include <thread>

#include <tact/detail/reply_slot.hpp>

#include "executor/executor.hpp"
#include "support/futex.hpp"

// Waiting for a reply from outside the actor world (seed 003, ASK): the
// waiting thread is lent to the executor as a guest worker and runs queued
// batches until its answer is there; with nothing to run it sleeps on the
// slot, so an idle asker costs no CPU.
namespace tact::detail {

void reply_base::settle(state outcome) noexcept {
  // Release: the asker that reads the outcome sees the value or error.
  state_.store(outcome, std::memory_order_release);
  if (wake_) futex_wake_all(state_);
}

void refuse_wait_on_worker(executor& ex) {
  if (ex.this_worker() != nullptr)
    throw std::logic_error{
        "tact: ask called from a behaviour of the system it asks; a worker cannot wait for its "
        "own system (send with a customer instead)"};
}

reply_base::state await_reply(executor& ex, reply_base& slot,
                              std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const std::uint32_t now_state = slot.state_.load(std::memory_order_acquire);
    if (now_state == reply_base::settling) {
      std::this_thread::yield();  // an answer is being stored: moments away
      continue;
    }
    if (now_state != reply_base::pending && now_state != reply_base::waiting)
      return static_cast<reply_base::state>(now_state);
    if (worker* guest = ex.take_guest()) {
      const bool worked = guest->help();
      ex.release_guest(guest);
      if (worked) continue;
    }
    const auto now = std::chrono::steady_clock::now();
    std::uint32_t expected = now_state;
    if (now >= deadline) {
      if (slot.state_.compare_exchange_strong(expected, reply_base::abandoned,
                                              std::memory_order_acquire))
        return reply_base::abandoned;
      continue;  // answered just now
    }
    // Announce the sleep, so that the answer wakes us; work that arrives
    // meanwhile is the workers' to run. The kernel re-checks `waiting`.
    if (now_state == reply_base::waiting ||
        slot.state_.compare_exchange_strong(expected, reply_base::waiting,
                                            std::memory_order_relaxed))
      futex_wait_for(slot.state_, reply_base::waiting, deadline - now);
  }
}

}  // namespace tact::detail
