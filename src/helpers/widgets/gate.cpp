#include "helpers/widgets/gate.hpp"

#include <memory>
#include <utility>

#include <tact/detail/widgets.hpp>
#include <tact/tx/timer.hpp>
#include <tact/widgets/once.hpp>
#include <tact/widgets/timeout.hpp>
#include <tact/widgets/unwind_protect.hpp>

namespace tact::widgets {

namespace {

// The gate's timer, set once after the gate exists (the timer needs its
// reference) and before the timer is armed or the gate is known to anyone:
// every handler of the gate runs after that, so it reads the handle
// without a race.
struct pending_timeout {
  timer handle;
};

// Arms the gate's timer: outside a handler at once, inside one when (and
// if) it commits. Until then the gate and its timer hold each other; if
// the handler rolls back, its staged action is dropped unrun, and the
// guard it carries breaks that cycle so both are freed (nobody else knows
// the gate yet, so touching the handle races with nothing).
void arm(const std::shared_ptr<pending_timeout>& pending, std::chrono::nanoseconds delay) {
  tact::detail::timer_record* r = tact::detail::timer_access::record(pending->handle);
  if (tact::detail::tx::self() == nullptr) {
    tact::detail::arm(r, delay);
    return;
  }
  struct unless_armed {
    std::shared_ptr<pending_timeout> pending;
    bool armed = false;
    ~unless_armed() {
      if (!armed) pending->handle = timer{};
    }
  };
  tx::on_commit([arming = std::make_shared<unless_armed>(pending), r, delay] {
    arming->armed = true;
    tact::detail::arm(r, delay);
  });
}

tx::behaviour gate(tx::actor_ref customer, std::function<void()> cleanup,
                   std::shared_ptr<pending_timeout> timeout) {
  return {[customer = std::move(customer), cleanup = std::move(cleanup),
           timeout = std::move(timeout)](const tx::message& first) {
    tx::forward(customer, first);
    if (cleanup) cleanup();
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
  tx::actor_ref made =
      spawn_in(system_of(customer), gate(customer, std::move(cleanup), pending), true);
  if (pending) {
    pending->handle = timer{new tact::detail::tx::tx_timer<timed_out>(
        made, std::chrono::nanoseconds{0}, timed_out{})};
    arm(pending, *timeout);
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
