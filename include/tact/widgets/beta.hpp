#pragma once

#include <stdexcept>
#include <type_traits>
#include <utility>

#include <tact/actor_system.hpp>
#include <tact/detail/widgets.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/transaction.hpp>
#include <tact/widgets/once.hpp>

namespace tact::widgets::detail {

// h, then become sink: the actor takes one message.
template <class H, class... P>
auto one_shot(H h, tx::handler_detail::type_list<P...>) {
  return [h = std::move(h)](const std::remove_cvref_t<P>&... args) {
    h(args...);
    tx::become(sink());
  };
}

template <class... H>
tx::behaviour continuation(H&&... handlers) {
  return {one_shot(std::forward<H>(handlers),
                   typename tx::handler_detail::signature_of<std::decay_t<H>>::params{})...};
}

}  // namespace tact::widgets::detail

namespace tact::widgets {

// xTActors' β-form: an anonymous continuation actor made from handlers,
// to pass as the customer of a request. It takes the first message one of
// its handlers matches and then drops everything, so a continuation runs
// once even if a service answers twice (it is a serialized actor: its
// handlers never run twice, even for answers that arrive together). What
// the handlers capture is the state carried into the continuation
// (immutable, as in any behaviour). It hears of failures: add a handler
// for `const tx::failure&` to learn that the request rolled back or
// matched nothing in the service.
//
//   // inside a handler of an actor that owes `customer` a total:
//   tx::send(prices, tact::widgets::beta([customer, qty](double unit) {
//              tx::send(customer, unit * qty);
//            }), quote{item});
//
// A handler's own become is replaced by the one that closes the
// continuation. From any thread, in `system`; inside a handler `system`
// may be left out (the running actor's), elsewhere that throws
// std::logic_error.
template <class... H>
requires(sizeof...(H) > 0 && (tx::handler_detail::handler<H> && ...))
tx::actor_ref beta(actor_system& system, H&&... handlers) {
  return detail::spawn_in(system, detail::continuation(std::forward<H>(handlers)...), true,
                          tx::mode::serialized);
}

// The same, inside a handler, in the running actor's system.
template <class... H>
requires(sizeof...(H) > 0 && (tx::handler_detail::handler<H> && ...))
tx::actor_ref beta(H&&... handlers) {
  const tx::actor_ref* running = tact::detail::tx::self();
  if (running == nullptr)
    throw std::logic_error{"tact: widgets::beta outside a handler needs the actor_system"};
  return beta(detail::system_of(*running), std::forward<H>(handlers)...);
}

}  // namespace tact::widgets
