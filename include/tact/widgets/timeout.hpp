#pragma once

#include <chrono>

#include <tact/export.hpp>
#include <tact/timer.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/widgets/timed_out.hpp>

namespace tact::widgets::detail {
TACT_API tx::actor_ref timeout(const tx::actor_ref& customer, std::chrono::nanoseconds delay);
}  // namespace tact::widgets::detail

namespace tact::widgets {

// A customer to hand a service in place of `customer`: the first message
// it gets within `delay` (the reply, or the tx::failure of a request that
// rolled back or matched nothing) goes on to `customer`; if none comes, `customer` gets
// timed_out{} instead. Whichever comes first wins; the other is dropped,
// and a reply that wins cancels the timer at once.
//
//   tx::send(service, tact::widgets::timeout(tx::self(), 200ms), lookup{key});
//   // the actor then handles either its reply or tact::widgets::timed_out
//
// Inside a handler the timer starts only if the handler commits.
// std::invalid_argument for an empty customer. Any thread.
template <class Rep, class Period>
tx::actor_ref timeout(const tx::actor_ref& customer, std::chrono::duration<Rep, Period> delay) {
  return tact::widgets::detail::timeout(customer, tact::detail::clamp_delay(delay));
}

}  // namespace tact::widgets
