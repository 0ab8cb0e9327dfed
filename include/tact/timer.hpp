#pragma once

#include <chrono>
#include <concepts>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <tact/actor.hpp>
#include <tact/build_config.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/detail/timer_core.hpp>
#include <tact/message.hpp>
#include <tact/send.hpp>

namespace tact {

namespace detail {
struct timer_access;
}

// A handle to a scheduled send (send_after, send_every, and their
// transactional twins). Copies share the timer; dropping every handle does
// not cancel it. An empty handle (default-constructed, or from a send to a
// finished actor) cancels nothing. A handle may outlive its system: stop()
// ended the timer, so cancel() and active() return false, and copying or
// dropping it touches nothing of the system.
class timer {
 public:
  timer() noexcept = default;
  // For the library: adopts one reference to r.
  explicit timer(detail::timer_record* r) noexcept : record_{r} {}
  timer(const timer& other) noexcept : record_{other.record_} {
    if (record_ != nullptr) record_->retain();
  }
  timer(timer&& other) noexcept : record_{std::exchange(other.record_, nullptr)} {}
  timer& operator=(timer other) noexcept {
    std::swap(record_, other.record_);
    return *this;
  }
  ~timer() {
    if (record_ != nullptr) record_->release();
  }

  // Stops the timer. True when this call won: no delivery of it starts
  // afterwards, even one whose message already waits in the target's
  // queue (it is dropped there, so a behaviour that cancels its own timer
  // never sees it again). False when there was nothing left to stop: a
  // one-shot timer whose message was delivered or is being received, a
  // timer cancelled before, or one that came due after its target had
  // finished (or after stop()) and ended there. Any thread.
  bool cancel() noexcept { return record_ != nullptr && detail::cancel(record_); }

  // Whether it may still deliver: not cancelled, not delivered (one-shot),
  // not ended for want of a target. A snapshot; cancel() is the only
  // race-free test.
  bool active() const noexcept { return record_ != nullptr && detail::active(record_); }

  explicit operator bool() const noexcept { return record_ != nullptr; }

 private:
  friend struct detail::timer_access;
  detail::timer_record* record_ = nullptr;
};

namespace detail {
struct timer_access {
  static timer_record* record(const timer& t) noexcept { return t.record_; }
};
}  // namespace detail

namespace detail {

// A timer to a classic actor. The actor is reached through its anchor, so
// a timer still pending when the actor finishes (even deleted) is dropped
// instead of reaching it; the message is the program's, as with send.
template <class A, class M>
class classic_timer final : public timer_record {
 public:
  classic_timer(A& target, M& msg, std::chrono::nanoseconds period)
      : timer_record{target.system(), period},
        target_{anchor_of(target)},
        msg_{&msg},
        owned_{msg.get_allocation() != allocation::Nodelete} {}

  post_outcome post() noexcept override {
    actor* a = lock(target_);
    if (a == nullptr) return post_outcome::refused;
    A& receiver = static_cast<A&>(*a);
    post_outcome outcome = post_outcome::refused;
    try {
      if (post_to(receiver, this, &fire_timer))
        outcome = post_outcome::queued;
      else
        report_send_to_finished(receiver, typeid(A), typeid(M));
    } catch (const std::bad_alloc&) {
      // The queue could not grow: nothing was sent, nothing is in flight;
      // the timer thread tries again.
      outcome = post_outcome::no_memory;
    }
    unlock(target_);
    return outcome;
  }

  void deliver(void* target) noexcept override {
    // Exact here: this runs on the actor's queue, after any delivery that
    // finished it.
    if (!open(target_)) {
      discard();  // first: landing may free the actor, and a message with it
      return drop(target);
    }
    detail::deliver<A, M>(target, msg_);  // which disposes of the message
  }

  void drop(void* target) noexcept override {
    // With checks, post_to counted the message in flight, and the actor
    // (even a finished one) stays until it lands.
    if constexpr (build::checks) land(*static_cast<A*>(target));
  }

  // A Nodelete message is the program's, and may be gone with the actor
  // (a member): never touched once the timer ends. (A periodic timer's
  // message is always Nodelete.)
  void discard() noexcept override {
    if (owned_) dispose(*msg_);
  }

 private:
  ~classic_timer() override { detail::release(target_); }

  anchor* target_;
  M* msg_;
  const bool owned_;  // Delete or Destroy: ours to dispose of if undelivered
};

// A delay in nanoseconds, at least zero and at most a century (so that
// `now + delay` cannot overflow).
template <class Rep, class Period>
std::chrono::nanoseconds clamp_delay(std::chrono::duration<Rep, Period> d) noexcept {
  constexpr std::chrono::hours century{24 * 365 * 100};
  if (d <= d.zero()) return std::chrono::nanoseconds{0};
  if (std::chrono::duration<double>{d} >= std::chrono::duration<double>{century}) return century;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d);
}

template <class A, class M>
timer start_classic(A& target, M& msg, std::chrono::nanoseconds delay,
                    std::chrono::nanoseconds period) {
  static_assert(receives<A, M>,
                "tact: the receiving actor declares no `tact::allocation receive(M&)` for this "
                "message type");
  // Sent from here on, even to a finished actor: as with send, its loss is
  // a dead letter, not a message destroyed unsent.
  if constexpr (build::checks) message_access::mark_sent(msg);
  if (target.finished()) {
    if constexpr (build::checks) actor_access::take_off(target);  // report_... lands it
    dispose(msg);
    report_send_to_finished(target, typeid(A), typeid(M));
    return {};
  }
  timer handle{new classic_timer<A, M>(target, msg, period)};
  arm(timer_access::record(handle), delay);
  return handle;
}

}  // namespace detail

// Sends `msg` to `target` once `delay` has passed, from the system's timer
// thread, unless the returned timer is cancelled first. The message is not
// copied (see send): it must outlive the delivery, or be a heap message
// with allocation::Delete, which is then deleted after delivery or when
// the timer is cancelled or dropped. A timer still pending when its target
// finishes is dropped. Safe from any thread, inside or outside a behaviour.
//
//   auto deadline = tact::send_after(500ms, *this, timed_out_);
//   ...
//   deadline.cancel();  // true: timed_out_ will not be received
template <class A, class M, class Rep, class Period>
requires std::derived_from<A, actor> && std::derived_from<M, message> timer
send_after(std::chrono::duration<Rep, Period> delay, A& target, M& msg) {
  static_assert(!std::is_const_v<M>,
                "tact: a behaviour receives its message as M&; send a non-const message");
  return detail::start_classic(target, msg, detail::clamp_delay(delay),
                               std::chrono::nanoseconds{0});
}

// Sends `msg` to `target` every `period` (the first after one period)
// until the timer is cancelled or the target finishes. A tick due while
// the previous one is still queued or being received is skipped, so a
// slow receiver is never flooded. The same message object is delivered
// each time, so it must be a Nodelete message that outlives the timer
// (std::invalid_argument otherwise, or for a period that is not positive).
template <class A, class M, class Rep, class Period>
requires std::derived_from<A, actor> && std::derived_from<M, message> timer
send_every(std::chrono::duration<Rep, Period> period, A& target, M& msg) {
  static_assert(!std::is_const_v<M>,
                "tact: a behaviour receives its message as M&; send a non-const message");
  const std::chrono::nanoseconds step = detail::clamp_delay(period);
  if (step.count() <= 0)
    throw std::invalid_argument{"tact: send_every needs a positive period"};
  if (msg.get_allocation() != allocation::Nodelete)
    throw std::invalid_argument{
        "tact: send_every delivers one message object many times; it must be Nodelete"};
  return detail::start_classic(target, msg, step, step);
}

}  // namespace tact
