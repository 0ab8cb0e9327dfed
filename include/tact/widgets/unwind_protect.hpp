#pragma once

#include <chrono>
#include <functional>

#include <tact/export.hpp>
#include <tact/timer.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::widgets::detail {
TACT_API tx::actor_ref unwind_protect(const tx::actor_ref& service, std::chrono::nanoseconds delay,
                                      std::function<void()> cleanup);
}  // namespace tact::widgets::detail

namespace tact::widgets {

// The actors' UNWIND-PROTECT (xTActors): an actor to send `service`'s
// requests to instead. Each request (customer first) goes on to `service`
// with a timeout gate (see timeout) as its customer; whichever comes
// first, the reply, the tx::failure of a request that rolled back, or
// timed_out{} after `delay`, runs `cleanup` once and then goes on to the
// original customer. `cleanup` runs inside the gate's handler, so its
// tx::send and tx::on_commit are staged and commit together with passing
// the outcome on (a tx::become in it is replaced by the gate's); it must
// be safe to run on any worker. If it throws, what it staged is discarded
// (all or nothing, as for a handler that throws) and the customer gets its
// exception as a tx::failure instead of the outcome.
//
//   auto guarded = tact::widgets::unwind_protect(file_writer, 1s, [log] {
//     tx::send(log, closed{});
//   });
//
// A request with no customer first is refused (its handler throws
// std::invalid_argument and rolls back). std::invalid_argument for an
// empty service. Any thread.
template <class Rep, class Period, class F>
tx::actor_ref unwind_protect(const tx::actor_ref& service, std::chrono::duration<Rep, Period> delay,
                             F&& cleanup) {
  return tact::widgets::detail::unwind_protect(service, tact::detail::clamp_delay(delay),
                                               std::function<void()>{std::forward<F>(cleanup)});
}

}  // namespace tact::widgets
