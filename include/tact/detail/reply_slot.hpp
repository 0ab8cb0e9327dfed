#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#include <tact/export.hpp>

namespace tact {
class actor_system;
}

namespace tact::detail {
class executor;

TACT_API executor& executor_of(actor_system& system) noexcept;
// std::logic_error if the calling thread is a worker of `ex`: it would wait
// for itself. Checked before an ask sends anything.
TACT_API void refuse_wait_on_worker(executor& ex);

// Where one reply to an ask lands, shared by the asking thread and whoever
// answers. The first answer (a value or an error) settles it; anything
// after that, or after the asker gave up, is dropped by the answerer.
class reply_base {
 public:
  // waiting: pending, and the asker sleeps (settle must wake it).
  enum state : std::uint32_t { pending, waiting, settling, replied, failed, no_reply, abandoned };

  // Claims the right to settle; false if settled or abandoned already.
  bool claim() noexcept {
    std::uint32_t seen = state_.load(std::memory_order_relaxed);
    while (seen == pending || seen == waiting)
      if (state_.compare_exchange_weak(seen, settling, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        wake_ = seen == waiting;
        return true;
      }
    return false;
  }
  // After a claim: publishes the outcome and wakes the asker.
  TACT_API void settle(state outcome) noexcept;

  void fail(std::exception_ptr e) noexcept {
    if (claim()) settle_failed(std::move(e));
  }
  void fail_unanswered() noexcept {
    if (claim()) settle(no_reply);
  }

  std::exception_ptr error() const noexcept { return error_; }

 protected:
  reply_base() = default;
  ~reply_base() = default;
  // After a claim.
  void settle_failed(std::exception_ptr e) noexcept {
    error_ = std::move(e);
    settle(failed);
  }

 private:
  friend TACT_API state await_reply(executor& ex, reply_base& slot,
                                    std::chrono::steady_clock::time_point deadline);
  std::atomic<std::uint32_t> state_{pending};
  bool wake_ = false;  // written by the claimer
  std::exception_ptr error_;
};

template <class T>
class reply_slot final : public reply_base {
 public:
  template <class U>
  void reply(U&& value) {
    if (!claim()) return;
    try {
      value_.emplace(std::forward<U>(value));
    } catch (...) {
      settle_failed(std::current_exception());
      return;
    }
    settle(replied);
  }
  // Once await_reply returned replied.
  T take() { return std::move(*value_); }

 private:
  std::optional<T> value_;
};

// Waits until `slot` is settled or `deadline` passes (then abandons it and
// returns abandoned), running queued work of `ex` on this thread meanwhile
// when a guest worker is free, and sleeping when there is none to run.
// Not on a worker of `ex` (see refuse_wait_on_worker).
TACT_API reply_base::state await_reply(executor& ex, reply_base& slot,
                                       std::chrono::steady_clock::time_point deadline);

}  // namespace tact::detail
