#pragma once

#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <tact/detail/tx_core.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/message.hpp>

namespace tact::tx {

// How an actor's messages may run.
enum class mode {
  // On any worker, several at once (xTActors' model): a become commits by
  // compare-and-swap, and a handler that loses the race runs again against
  // the new behaviour. After defaults::collision_limit lost races for one
  // message the actor switches to serialized for good.
  parallel,
  // One at a time, all on one work queue (xTActors' PAR-SAFE): a become
  // never collides. For actors that become on most messages.
  serialized,
};

// Sends a message made of `args...` (decayed and copied or moved in) to
// `to`. Inside a handler the send is staged: it happens only if the handler
// returns normally (and wins its become, if it staged one), after every
// send of the actor's earlier committed invocations. Anywhere else it
// happens at once. An empty `to` drops the message and counts it.
// Allocates the message once. Safe from any thread.
//
// By convention a reply goes to a customer passed as the first element:
//   tact::tx::send(service, self(), request{...});
//
// Inlined into the handler: most handlers send, and the call's frame would
// cost a send more than its staging does.
template <class... Args>
[[gnu::always_inline]] inline void send(const actor_ref& to, Args&&... args) {
  detail::tx::cell* const target = to.cell();  // before args may move `to` away
  auto* m = new message_of<std::decay_t<Args>...>(std::forward<Args>(args)...);
  if constexpr (detail::tx::customer_first<std::decay_t<Args>...>) detail::tx::note_request(*m);
  detail::tx::send(m, target);
}

// Sends a copy of `m`'s elements to `to`, as send would: how a handler
// passes on a message it does not understand (a proxy, a gate). With
// `customer`, the copy's first element is replaced by it: how a widget
// interposes itself between a request and its customer.
// std::invalid_argument if `m` has no customer to replace (its first
// element is not an actor_ref); std::logic_error if its elements are not
// all copyable. Allocates the copy. Safe from any thread.
inline void forward(const actor_ref& to, const message& m) {
  message* copy = message_access::copy(m);
  detail::tx::note_request(*copy);
  detail::tx::send(copy, to.cell());
}
inline void forward(const actor_ref& to, const message& m, const actor_ref& customer) {
  message* copy = message_access::copy(m, &customer);
  detail::tx::note_request(*copy);
  detail::tx::send(copy, to.cell());
}

// Only inside a handler: the actor's behaviour for its next messages, if
// this handler commits. A later become in the same handler replaces an
// earlier one. std::logic_error outside a handler.
inline void become(behaviour next) { detail::tx::become(std::move(next).release()); }

// A new actor with behaviour `initial`. Inside a handler it belongs to the
// running actor's system, and it is reclaimed if the handler rolls back and
// the reference was not kept elsewhere; it can receive messages only once
// someone sends it one, and sends from a handler are staged. Outside a
// handler, use spawn.
inline actor_ref create(behaviour initial, mode m = mode::parallel) {
  return actor_ref::adopt(
      detail::tx::create(std::move(initial).release(), m == mode::serialized, nullptr));
}

// A new actor in `system`, from any thread.
inline actor_ref spawn(actor_system& system, behaviour initial, mode m = mode::parallel) {
  return actor_ref::adopt(
      detail::tx::create(std::move(initial).release(), m == mode::serialized, &system));
}

// A bound on a transactional actor's mailbox: messages sent to it and not
// yet begun (see docs/flow_control.md); 0: none.
struct bounded {
  std::uint32_t most;
};

// A new serialized actor in `system` whose mailbox is bounded: a handler
// whose commit sends to it while it is full commits all the same, and its
// own actor then waits, muted (its next messages wait too), until the
// mailbox is down to half the bound. From any thread.
inline actor_ref spawn(actor_system& system, behaviour initial, bounded bound) {
  return actor_ref::adopt(
      detail::tx::create(std::move(initial).release(), true, &system, bound.most));
}

// Only inside a handler: runs `action` if and when the handler commits,
// after its sends are queued; dropped on rollback or on a lost become race.
// The actions of one actor run one commit at a time, in its commit order,
// possibly on another worker (docs/transactional.md, "What a commit
// guarantees"). For effects outside the transactional world, such as a
// send to a classic actor (tact::send itself is immediate, even from a
// handler) or a timer. std::logic_error outside a handler.
inline void on_commit(std::function<void()> action) {
  detail::tx::on_commit(std::move(action));
}

// Only inside a handler: the actor running it. std::logic_error elsewhere.
inline const actor_ref& self() {
  if (const actor_ref* me = detail::tx::self()) return *me;
  throw std::logic_error{"tact: tx::self() called outside a transactional handler"};
}

}  // namespace tact::tx
