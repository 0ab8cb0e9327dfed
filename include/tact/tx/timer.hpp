#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tact/detail/timer_core.hpp>
#include <tact/detail/tx_core.hpp>
#include <tact/timer.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/transaction.hpp>

namespace tact::detail::tx {

// A timer to a transactional actor. A one-shot timer makes its message
// when it is made, where running out of memory is the caller's to see, so
// its firing cannot fail. A periodic one keeps the values and makes a
// fresh copy for each tick once its delivery has won; a copy that throws
// (out of memory, or a copy constructor's error) skips that tick, and is
// reported.
template <class... Ts>
class tx_timer final : public timer_record {
 public:
  template <class... Args>
  tx_timer(const ::tact::tx::actor_ref& to, std::chrono::nanoseconds period, Args&&... args)
      : timer_record{system_of(to.cell()), period}, to_{to} {
    if (periodic())
      values_.emplace(std::forward<Args>(args)...);
    else
      ready_ = make(std::forward<Args>(args)...);
  }
  ~tx_timer() override {
    if (ready_ != nullptr) ::tact::tx::message_access::destroy(ready_);
  }

  // The envelope holds a reference of its own to the actor, so that the
  // timer can let go of its reference when it ends (finished()) even while
  // an envelope is queued: a behaviour that keeps its own timer's handle
  // then makes no cycle that outlives the timer.
  post_outcome post() noexcept override {
    cell* c = to_.cell();
    tx::retain(c);
    const post_outcome outcome = post_envelope(c, this, &fire_timer);
    if (outcome != post_outcome::queued) tx::release(c);
    return outcome;
  }

  bool redirect(void* target) noexcept override {
    return forward_envelope(static_cast<cell*>(target), this, &fire_timer);
  }

  void deliver(void* target) noexcept override {
    ::tact::tx::message* m = std::exchange(ready_, nullptr);
    if (m == nullptr) {
      try {
        m = std::apply([](const Ts&... v) { return make(v...); }, *values_);
      } catch (...) {
        report_skipped_tick(static_cast<cell*>(target), std::current_exception());
        return drop(target);
      }
    }
    run_here(m, static_cast<cell*>(target));
    drop(target);
  }

  void drop(void* target) noexcept override { tx::release(static_cast<cell*>(target)); }
  void discard() noexcept override {
    values_.reset();
    if (ready_ != nullptr) ::tact::tx::message_access::destroy(std::exchange(ready_, nullptr));
  }
  void finished() noexcept override { to_.reset(); }

 private:
  template <class... Args>
  static ::tact::tx::message* make(Args&&... args) {
    return new ::tact::tx::message_of<Ts...>(std::forward<Args>(args)...);
  }

  ::tact::tx::actor_ref to_;                 // until the timer ends
  ::tact::tx::message* ready_ = nullptr;     // a one-shot timer's, until delivered or discarded
  std::optional<std::tuple<Ts...>> values_;  // a periodic timer's, until it ends
};

// Outside a handler: arms at once. Inside one: when (and if) it commits.
inline timer start(timer_record* r, std::chrono::nanoseconds delay) {
  timer handle{r};
  if (self() == nullptr)
    arm(r, delay);
  else
    on_commit([keep = handle, r, delay] { arm(r, delay); });
  return handle;
}

}  // namespace tact::detail::tx

namespace tact::tx {

// Sends the message made of `args...` to `to` once `delay` has passed (see
// send), unless the returned timer is cancelled first. Inside a handler
// the timer starts only if the handler commits, and its delay counts from
// the commit; cancel() is immediate, so inside a handler cancel from an
// on_commit action to keep it transactional. The timer holds a reference
// to `to` until it is done. Any thread, while `to`'s system exists (with
// checks on, a timer for a reference that outlived it aborts).
//
//   tx::send_after(2s, tx::self(), give_up{});
template <class Rep, class Period, class... Args>
timer send_after(std::chrono::duration<Rep, Period> delay, const actor_ref& to, Args&&... args) {
  if (!to) {
    send(to, std::forward<Args>(args)...);  // dropped and counted, like any send to no one
    return {};
  }
  return detail::tx::start(
      new detail::tx::tx_timer<std::decay_t<Args>...>(to, std::chrono::nanoseconds{0},
                                                       std::forward<Args>(args)...),
      detail::clamp_delay(delay));
}

// Sends a copy of the message made of `args...` to `to` every `period`
// (the first after one period) until cancelled; a tick due while the
// previous one is still queued or running is skipped. Otherwise as
// send_after. std::invalid_argument for a period that is not positive.
template <class Rep, class Period, class... Args>
timer send_every(std::chrono::duration<Rep, Period> period, const actor_ref& to, Args&&... args) {
  const std::chrono::nanoseconds step = detail::clamp_delay(period);
  if (step.count() <= 0) throw std::invalid_argument{"tact: send_every needs a positive period"};
  if (!to) {
    send(to, std::forward<Args>(args)...);
    return {};
  }
  return detail::tx::start(
      new detail::tx::tx_timer<std::decay_t<Args>...>(to, step, std::forward<Args>(args)...),
      step);
}

}  // namespace tact::tx
