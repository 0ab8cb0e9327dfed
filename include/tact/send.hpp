#pragma once

#include <chrono>
#include <concepts>
#include <exception>
#include <memory>
#include <type_traits>
#include <typeinfo>

#include <tact/actor.hpp>
#include <tact/build_config.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/message.hpp>

namespace tact {

// True when actor type A declares `allocation receive(M&)` (directly or
// through a base): exactly the sends that compile.
template <class A, class M>
concept receives = std::derived_from<A, actor> && std::derived_from<M, message> &&
    requires(A& a, M& m) {
  { a.receive(m) } -> std::same_as<allocation>;
};

template <class P>
concept poison_pill = std::same_as<P, delete_msg_t> || std::same_as<P, destroy_msg_t> ||
    std::same_as<P, finished_msg_t>;

namespace detail {

template <class P>
inline constexpr allocation pill_action = std::same_as<P, delete_msg_t>    ? allocation::Delete
                                          : std::same_as<P, destroy_msg_t> ? allocation::Destroy
                                                                           : allocation::Finished;

// The allocation action `how` of a message the engine is done with. The
// common Nodelete case is a branch; the rest is in the library (the
// virtual destructor finds the most derived type).
inline void dispose(message& m, allocation how) noexcept {
  if (how == allocation::Delete || how == allocation::Destroy) [[unlikely]]
    dispose_message(m, how);
}
inline void dispose(message& m) noexcept { dispose(m, m.get_allocation()); }

// The receiver's type for a report. A handle's poison pill is delivered
// through the base (A = actor): with checks, the dynamic type, read while
// checks keep a finished actor's storage alive; without, only the base.
template <class A>
const std::type_info& actor_type(const A& a) noexcept {
  if constexpr (std::same_as<A, actor> && build::checks)
    return typeid(a);
  else
    return typeid(A);
}

// The trampoline of a (receiver type, message type) pair: recovers both
// static types, runs the behaviour, then the message's and the actor's
// allocation actions. An exception ends at the catch: the message counts
// as dropped, the actor carries on, the system's handler decides the rest.
template <class A, class M>
void deliver(void* target, void* msg) noexcept {
  A& a = *static_cast<A*>(target);
  M& m = *static_cast<M*>(msg);
  if constexpr (build::checks) {
    if (actor_access::queue_of(a) == finished_queue) [[unlikely]] {
      dispose(m);
      report_delivery_to_finished(a, typeid(A), typeid(M));
      return;
    }
    if (const std::uint32_t running = actor_access::enter(a); running != 0) [[unlikely]]
      report_overlap(typeid(A), typeid(M), running);
  }
  if (mailbox_gauge* g = actor_access::gauge_of(a)) [[unlikely]]
    note_received(*g);
  // A message that went on a worker's stack leaves it, or the batch the
  // stack was flushed into: none waits on a stack for `a` now. Whichever
  // message of `a` runs while the state says one waits is that one (see
  // detail::stacking). This runner holds a's queue: the state is its to
  // write.
  std::atomic<std::uint8_t>& stacked = actor_access::stacking(a);
  if (const std::uint8_t state = stacked.load(std::memory_order_relaxed); stacking::waits(state))
      [[unlikely]]
    stacked.store(stacking::after_run(state), std::memory_order_relaxed);
  // The message is read here and not after the receive (see begin_delivery).
  delivery_record d;
  begin_delivery(d, m, a);
  allocation outcome = allocation::Nodelete;
  try {
    outcome = a.receive(m);
  } catch (...) {
    // A message that waits for an answer (tact::request) learns of it.
    if constexpr (requires { m.behaviour_failed(std::exception_ptr{}); })
      m.behaviour_failed(std::current_exception());
    report_exception(a, typeid(A), typeid(M));
  }
  const allocation how = delivery_allocation(d);
  // Cleared, not restored: whoever runs envelopes from inside a behaviour
  // keeps that behaviour's word (behaviour_local_kept).
  behaviour_local = 0;
  // Before the allocation actions, which may free the actor.
  if constexpr (build::checks) actor_access::leave(a);
  dispose(m, how);
  if (outcome != allocation::Nodelete) retire(a, outcome);
  if constexpr (build::checks) land(a);
}

template <class A, class P>
void deliver_pill(void* target, void*) noexcept {
  A& a = *static_cast<A*>(target);
  if constexpr (build::checks) {
    if (actor_access::queue_of(a) == finished_queue) [[unlikely]] {
      report_delivery_to_finished(a, actor_type(a), typeid(P));
      return;
    }
    // A pill is a behaviour too: it must not overlap one.
    if (const std::uint32_t running = actor_access::enter(a); running != 0) [[unlikely]]
      report_overlap(actor_type(a), typeid(P), running);
    actor_access::leave(a);
  }
  retire(a, pill_action<P>);
  if constexpr (build::checks) land(a);
}

// An envelope of this pair that never runs (still queued at stop(), or for
// a destroyed sponsor): its message gets the allocation action it carries,
// as a dead letter's does, and with checks it lands, so a finished Delete
// actor waiting for its last message is freed.
template <class A, class M>
std::uint32_t drop_unrun(const envelope& e) noexcept {
  if constexpr (!poison_pill<M>) dispose(*static_cast<M*>(e.message));
  if constexpr (build::checks) land(*static_cast<A*>(e.target));
  return 1;
}

// Registers drop_unrun for the pair's trampoline: the first send of the
// pair names it, so its initializer runs before main and a send costs
// nothing for it.
template <class A, class M>
constexpr run_fn trampoline() noexcept {
  if constexpr (poison_pill<M>)
    return &deliver_pill<A, M>;
  else
    return &deliver<A, M>;
}
template <class A, class M>
inline const bool dropped_unrun_known = on_discard(trampoline<A, M>(), &drop_unrun<A, M>);

// What every classic send requires of its message argument, of type M&&.
template <class M>
consteval void check_sent_by_reference() {
  static_assert(std::is_lvalue_reference_v<M>,
                "tact: messages are sent by reference, never copied; send an object that "
                "outlives its delivery, or make one per send with tact::send_new");
  static_assert(!std::is_const_v<std::remove_reference_t<M>>,
                "tact: a behaviour receives its message as M&; send a non-const message");
}

// Returns false if the receiver has finished; the caller then disposes of
// the message and reports it, in that order (the report lands the message,
// which may free the receiver, and the message may be part of it).
// Throws std::bad_alloc if the queue cannot grow, and then nothing was
// sent (the receiver does not count it in flight). `target` is the
// receiver as the type `run` expects.
// `may_stack`: a plain message, which may go on a worker's stack (see
// detail::stacking); false for any other envelope (a pill, a timer's),
// which counts as sent aside.
inline bool post_to(actor& receiver, void* target, void* msg, run_fn run, bool may_stack = false) {
  if constexpr (build::checks) actor_access::take_off(receiver);
  const std::uint32_t queue = actor_access::queue_of(receiver);
  if (queue == finished_queue) [[unlikely]]
    return false;
  try {
    std::atomic<std::uint8_t>& aside = actor_access::sent_aside(receiver);
    if (const std::uint8_t sent = aside.load(std::memory_order_relaxed);
        sent != stacking::aside_most) [[unlikely]] {
      if (may_stack && sent == 0 && post_on_stack(receiver, queue, target, msg, run)) return true;
      // Raised before the post: see post_on_stack.
      aside.store(static_cast<std::uint8_t>(sent + 1), std::memory_order_relaxed);
    }
    post(actor_access::executor_of(receiver), queue, target, msg, run);
  } catch (...) {
    if constexpr (build::checks) land(receiver);  // taken off above, never sent
    throw;
  }
  return true;
}
template <class A>
bool post_to(A& receiver, void* msg, run_fn run) {
  return post_to(receiver, std::addressof(receiver), msg, run);
}

// What became of a message send (post_message).
enum class posted : std::uint8_t {
  queued,
  finished,  // the receiver has finished: the caller disposes and reports
  dropped,   // its full mailbox dropped it (overflow::drop): counted, reported
};
// How a send meets a full mailbox: it waits for room if it can (or is
// dropped, as the bound says), or its caller made room already
// (try_send, send_within).
enum class admission : std::uint8_t { make_room, admitted };

// post_message for a bounded receiver, whose gauge is g (mailbox_bound.cpp).
TACT_API posted post_bounded(actor& receiver, mailbox_gauge& g, void* target, message& msg,
                             run_fn run, admission how);

// post_to for a message (not a pill, not a timer): a bounded receiver
// counts it, and a full one makes the sender wait or drops it first. Only
// the unbounded path is inline, a few loads and a call, so that a send
// inlined into the caller's hot loop costs it no registers for the rest.
inline posted post_message(actor& receiver, void* target, message& msg, run_fn run,
                           admission how = admission::make_room, bool may_stack = false) {
  mailbox_gauge* const g = actor_access::gauge_of(receiver);
  if (g == nullptr) [[likely]]
    return post_to(receiver, target, std::addressof(msg), run, may_stack) ? posted::queued
                                                                          : posted::finished;
  return post_bounded(receiver, *g, target, msg, run, how);
}

template <class A, class M>
void send_checked(A& receiver, M& msg, admission how) {
  (void)dropped_unrun_known<A, M>;
  if constexpr (build::checks) message_access::mark_sent(msg);
  if (post_message(receiver, std::addressof(receiver), msg, &deliver<A, M>, how, true) ==
      posted::finished) [[unlikely]] {
    dispose(msg);  // a dead letter still gets its allocation action
    report_send_to_finished(receiver, typeid(A), typeid(M));
  }
}

template <class A, class M>
consteval void check_send() {
  using message_type = std::remove_reference_t<M>;
  check_sent_by_reference<M>();
  static_assert(receives<A, message_type>,
                "tact: the receiving actor declares no `tact::allocation receive(M&)` for this "
                "message type");
}

}  // namespace detail

// Sends `msg` to `receiver`: safe from any thread, inside or outside a
// behaviour. Allocates nothing once the receiver's queue has grown to its
// working size, and returns the receiver so sends cascade. The message is
// not copied: it must stay alive until its receiver is done with it (see
// message). Compiles only if the receiver accepts M.
//
// Never blocks, unless the receiver's mailbox is bounded and full: then a
// behaviour waits for room, suspended without holding its worker, and a
// thread outside the actor world goes on (see docs/flow_control.md;
// try_send and send_within are for threads that want to be held back).
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<std::remove_cvref_t<M>, message> A& send(
    A& receiver, M&& msg) {
  detail::check_send<A, M>();
  detail::send_checked(receiver, msg, detail::admission::make_room);
  return receiver;
}

// Sends `msg` unless the receiver's mailbox is bounded and full; returns
// whether it sent. Never waits. A message not sent is still the caller's.
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<std::remove_cvref_t<M>, message>
bool try_send(A& receiver, M&& msg) {
  detail::check_send<A, M>();
  if (const detail::mailbox_gauge* g = detail::actor_access::gauge_of(receiver);
      g != nullptr && g->full())
    return false;
  detail::send_checked(receiver, msg, detail::admission::admitted);
  return true;
}

// Sends `msg`, waiting up to `patience` for room if the receiver's mailbox
// is bounded and full; returns whether it sent. A behaviour waits
// suspended, without holding its worker; any other thread sleeps. A
// message not sent is still the caller's.
template <class A, class M, class Rep, class Period>
requires std::derived_from<A, actor> && std::derived_from<std::remove_cvref_t<M>, message>
bool send_within(A& receiver, M&& msg, std::chrono::duration<Rep, Period> patience) {
  detail::check_send<A, M>();
  if (detail::mailbox_gauge* g = detail::actor_access::gauge_of(receiver);
      g != nullptr && g->full() &&
      !detail::wait_for_room(receiver, *g,
                             std::chrono::steady_clock::now() +
                                 std::chrono::ceil<std::chrono::steady_clock::duration>(patience)))
    return false;
  detail::send_checked(receiver, msg, detail::admission::admitted);
  return true;
}

// Sends a poison pill (see delete_msg, destroy_msg, finished_msg).
template <class A, class P>
requires std::derived_from<A, actor> && poison_pill<P> A& send(A& receiver, P) {
  (void)detail::dropped_unrun_known<A, P>;
  if (!detail::post_to(receiver, nullptr, &detail::deliver_pill<A, P>)) [[unlikely]]
    detail::report_send_to_finished(receiver, typeid(A), typeid(P));
  return receiver;
}

// `receiver | msg1 | msg2`: the same as send, cascading.
template <class A, class M>
requires std::derived_from<A, actor> &&
    (std::derived_from<std::remove_cvref_t<M>, message> || poison_pill<std::remove_cvref_t<M>>)A&
    operator|(A& receiver, M&& msg) {
  return send(receiver, std::forward<M>(msg));
}

}  // namespace tact
