#include "helpers/widgets/gate.hpp"

#include <memory>
#include <utility>

#include <tact/detail/widgets.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/timer.hpp>
#include <tact/widgets/once.hpp>
#include <tact/widgets/timeout.hpp>
#include <tact/widgets/unwind_protect.hpp>

#include "transactional/savepoint.hpp"

namespace tact::widgets {

namespace {

// The gate's timer, set once after the gate exists (the timer needs its
// reference) and before the timer is armed or the gate is known to anyone:
// every handler of the gate runs after that, so it reads the handle
// without a race. It is never written again.
struct pending_timeout {
  timer handle;
};

// Ends a timer that was never armed: cancelled, then handed to the timer
// thread, which ends it at once and lets go of its target.
void end_unarmed(tact::detail::timer_record* r) noexcept {
  tact::detail::cancel(r);
  try {
    tact::detail::arm(r, std::chrono::nanoseconds{0});
  } catch (...) {
    // No timer thread can be started: the gate and its timer stay, as
    // anything would that needs a thread to end.
  }
}

// Arms the gate's timer: outside a handler at once, inside one when (and
// if) it commits. Until the timer ends the gate and its timer hold each
// other (the gate keeps the handle to cancel it, the timer keeps the gate
// to deliver to it), so a timer that is never armed must still be ended:
// when arming throws, or the handler rolls back and drops the staged
// arming unrun.
void arm(const timer& handle, std::chrono::nanoseconds delay) {
  struct until_armed {
    // A constructor, not an aggregate: make_shared's parenthesized
    // aggregate initialization is C++20 that Clang 14 lacks.
    explicit until_armed(tact::detail::timer_record* r) noexcept : record{r} {}
    tact::detail::timer_record* record;
    bool armed = false;
    ~until_armed() {
      if (!armed) end_unarmed(record);
    }
  };
  tact::detail::timer_record* r = tact::detail::timer_access::record(handle);
  if (tact::detail::tx::self() == nullptr) {
    until_armed guard{r};
    tact::detail::arm(r, delay);
    guard.armed = true;
    return;
  }
  tx::on_commit([guard = std::make_shared<until_armed>(r), delay] {
    tact::detail::arm(guard->record, delay);
    guard->armed = true;
  });
}

tx::behaviour gate(tx::actor_ref customer, std::function<void()> cleanup,
                   std::shared_ptr<pending_timeout> timeout) {
  return {[customer = std::move(customer), cleanup = std::move(cleanup),
           timeout = std::move(timeout)](const tx::message& first) {
    try {
      // All or nothing: a cleanup that throws leaves none of its effects.
      if (cleanup) tact::detail::tx::run_in_savepoint(cleanup);
      tx::forward(customer, first);
    } catch (...) {
      // The cleanup threw, or the outcome cannot be passed on (a reply
      // that cannot be copied): the customer gets the exception rather
      // than nothing, and the gate still closes.
      tx::send(customer, tx::failure{std::current_exception()});
    }
    tx::become(sink());
    // The gate holds its timer and the timer its gate until it ends:
    // ending it now frees both at once rather than when it comes due.
    if (timeout) tx::on_commit([timeout] { timeout->handle.cancel(); });
  }};
}

}  // namespace

tx::actor_ref detail::make_gate(const tx::actor_ref& customer, std::function<void()> cleanup,
                                std::optional<std::chrono::nanoseconds> timeout) {
  require(customer, "tact: a widget needs a customer to answer");
  std::shared_ptr<pending_timeout> pending;
  if (timeout) pending = std::make_shared<pending_timeout>();
  // Serialized: its first message is taken once, and its cleanup run
  // once, even when answers arrive on several workers at once.
  tx::actor_ref made = spawn_in(system_of(customer),
                                gate(customer, std::move(cleanup), pending), true,
                                tx::mode::serialized);
  if (pending) {
    pending->handle = timer{new tact::detail::tx::tx_timer<timed_out>(
        made, std::chrono::nanoseconds{0}, timed_out{})};
    arm(pending->handle, *timeout);
  }
  return made;
}

tx::actor_ref detail::timeout(const tx::actor_ref& customer, std::chrono::nanoseconds delay) {
  return make_gate(customer, {}, delay);
}

tx::actor_ref detail::unwind_protect(const tx::actor_ref& service, std::chrono::nanoseconds delay,
                                     std::function<void()> cleanup) {
  require(service, "tact: widgets::unwind_protect needs a service");
  return spawn_in(system_of(service),
                  {[service, delay, cleanup = std::move(cleanup)](const tx::message& request) {
                    const tx::actor_ref& customer = customer_of(request, "widgets::unwind_protect");
                    tx::forward(service, request, make_gate(customer, cleanup, delay));
                  }},
                  false);
}

tx::behaviour sink() {
  static const tx::behaviour drops_all{[](const tx::message&) {}};
  return drops_all;
}

tx::actor_ref once(const tx::actor_ref& target) {
  return detail::make_gate(target, {}, std::nullopt);
}

}  // namespace tact::widgets
