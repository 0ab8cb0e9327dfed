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
class runner;

TACT_API executor& executor_of(actor_system& system) noexcept;
// std::logic_error where an ask cannot wait for its answer: inside a
// transactional handler (its effects are staged until it returns, see
// docs/ask.md), or on a worker thread outside any behaviour. Checked
// before an ask sends anything.
TACT_API void refuse_ask_that_cannot_wait();

// Where one reply to an ask lands, shared by the asker and whoever
// answers. The first answer (a value or an error) settles it; anything
// after that, or after the asker gave up, is dropped by the answerer.
class reply_base {
 public:
  // waiting: pending, and the asking thread sleeps on the slot (settle
  // wakes it). suspended: pending, and the asker is a behaviour suspended
  // on runner host_ (a worker, or a guest: settle wakes it, see
  // await_reply). timed_out: a timeout on the way to the service (a
  // widget's) answered in its place. abandoned: the asker's own deadline
  // passed.
  enum state : std::uint32_t {
    pending,
    waiting,
    suspended,
    settling,
    replied,
    failed,
    no_reply,
    node_down,
    timed_out,
    abandoned
  };

  // Claims the right to settle; false if settled or abandoned already.
  // Sequentially consistent: a runner about to sleep with a suspended
  // asker reads the state after announcing its sleep, so either it sees
  // this claim or our wake-up sees it asleep (see runner::wait).
  bool claim() noexcept {
    std::uint32_t seen = state_.load(std::memory_order_relaxed);
    while (seen == pending || seen == waiting || seen == suspended)
      if (state_.compare_exchange_weak(seen, settling, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
        claimed_from_ = static_cast<state>(seen);
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
  void fail_node_down() noexcept {
    if (claim()) settle(node_down);
  }
  void fail_timed_out() noexcept {
    if (claim()) settle(timed_out);
  }

  std::exception_ptr error() const noexcept { return error_; }

  // Whether no answer has settled the slot and its asker has not given up.
  bool open() const noexcept {
    const std::uint32_t s = state_.load(std::memory_order_acquire);
    return s == pending || s == waiting || s == suspended;
  }

  // A slot that no asker waits on, whose answer goes elsewhere (to an
  // asker on another node, docs/remote.md): `relay` is called once, on
  // the answering thread, after the outcome is published. Set before the
  // request is sent.
  using relay_fn = void (*)(reply_base& slot, state outcome) noexcept;
  void relay_to(relay_fn relay) noexcept { relay_ = relay; }

 protected:
  reply_base() = default;
  ~reply_base() = default;
  // After a claim.
  void settle_failed(std::exception_ptr e) noexcept {
    error_ = std::move(e);
    settle(failed);
  }

 private:
  friend struct reply_access;
  std::atomic<std::uint32_t> state_{pending};
  state claimed_from_ = pending;  // written by the claimer
  runner* host_ = nullptr;        // written by the asker before it suspends
  relay_fn relay_ = nullptr;
  std::exception_ptr error_;
};

// Not final: a relayed slot (see relay_to) carries where its answer goes.
template <class T>
class reply_slot : public reply_base {
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

// `timeout` from now on `ex`'s clock: the steady clock, or the virtual
// clock of a deterministic system. Every ask calls it first; with checks
// on, it aborts if `ex` has been destroyed (an ask of an actor that
// outlived its system).
TACT_API std::chrono::steady_clock::time_point ask_deadline(executor& ex,
                                                            std::chrono::nanoseconds timeout);

// Waits until `slot` is settled or `deadline` passes (then abandons it and
// returns abandoned). Inside a behaviour run by a worker (or by a guest, see
// below), the behaviour is suspended on a fiber and the worker runs other
// work until the answer comes. From a thread outside the actor world, the
// thread runs queued work of `ex` meanwhile when a guest worker is free,
// and sleeps when there is none to run. On a sponsor's thread it sleeps.
// On a deterministic executor it runs steps, and when none is left moves
// virtual time to the next timer due before the deadline, or to the
// deadline.
TACT_API reply_base::state await_reply(executor& ex, reply_base& slot,
                                       std::chrono::steady_clock::time_point deadline);

}  // namespace tact::detail
