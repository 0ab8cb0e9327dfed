#pragma once

#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

#include <tact/actor_system.hpp>
#include <tact/ask.hpp>
#include <tact/detail/reply_slot.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/transaction.hpp>
#include <tact/widgets/timed_out.hpp>

namespace tact::tx {

// Asks transactional actor `to`: sends it (customer, args...), where
// customer is a one-shot reply actor, and waits at most `timeout` for a
// message of exactly one element of type R sent to that customer, the
// customer-first convention of xTActors:
//
//   auto n = tact::tx::ask<int>(system, counter, 100ms, get{});
//   // the counter answers with tx::send(customer, value)
//
// Outcomes as for the classic ask (see ask_result): a handler that throws
// on the request answers ask_error::failed with its exception; a
// widgets::timed_out sent to the customer (by a timeout gate or an
// unwind_protect between the asker and the service) answers
// ask_error::timeout at once; a tx::node_down sent to it (the asked actor
// is on another node, lost) answers ask_error::node_down at once; once
// nobody holds the customer any more without having answered,
// ask_error::no_reply.
// Waits as tact::ask does: from outside the actor world the calling thread
// helps run queued work; inside a classic behaviour the behaviour is
// suspended while its worker runs other actors. Not inside a handler
// (std::logic_error, which rolls the handler back if uncaught): its
// effects are staged until it returns, so it could not act on the answer
// before committing; send with tx::self() as the customer instead.
template <class R, class... Args>
ask_result<R> ask(actor_system& system, const actor_ref& to, std::chrono::nanoseconds timeout,
                  Args&&... args) {
  detail::executor& ex = detail::executor_of(system);
  detail::refuse_ask_that_cannot_wait();
  const auto deadline = detail::ask_deadline(ex, timeout);
  auto slot = std::make_shared<detail::reply_slot<R>>();
  // Destroyed with the customer's behaviour, which happens once nobody
  // holds the customer: if no answer came by then, none can.
  struct unanswered {
    // Not an aggregate: make_shared would need parenthesized aggregate
    // initialization, which Clang 14 lacks.
    explicit unanswered(std::shared_ptr<detail::reply_slot<R>> s) noexcept : slot{std::move(s)} {}
    std::shared_ptr<detail::reply_slot<R>> slot;
    ~unanswered() { slot->fail_unanswered(); }
  };
  auto guard = std::make_shared<const unanswered>(slot);
  actor_ref customer = spawn(
      system, {[guard](const R& value) { guard->slot->reply(value); },
               [guard](const failure& f) { guard->slot->fail(f.error); },
               [guard](widgets::timed_out) { guard->slot->fail_timed_out(); },
               [guard](const node_down&) { guard->slot->fail_node_down(); }});
  guard.reset();
  customer.cell()->told_of_failures = true;  // nobody else knows it yet
  send(to, std::move(customer), std::forward<Args>(args)...);
  return tact::detail::outcome(*slot, detail::await_reply(ex, *slot, deadline));
}

}  // namespace tact::tx
