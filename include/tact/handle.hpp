#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <typeinfo>

#include <tact/actor.hpp>
#include <tact/build_config.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/message.hpp>
#include <tact/send.hpp>

namespace tact {

namespace detail {

// The index in Ms of the type a message of type M travels as through a
// handle<Ms...>: M itself if the handle names it, else the one type the
// handle names that M derives from. npos if there is none, ambiguous if
// there are several.
inline constexpr std::size_t npos_slot = static_cast<std::size_t>(-1);
inline constexpr std::size_t ambiguous_slot = npos_slot - 1;

template <class M, class... Ms>
consteval std::size_t handle_slot() {
  constexpr bool exact[] = {std::same_as<M, Ms>...};
  constexpr bool base[] = {std::derived_from<M, Ms>...};
  for (std::size_t i = 0; i < sizeof...(Ms); ++i)
    if (exact[i]) return i;
  std::size_t found = npos_slot;
  for (std::size_t i = 0; i < sizeof...(Ms); ++i) {
    if (!base[i]) continue;
    if (found != npos_slot) return ambiguous_slot;
    found = i;
  }
  return found;
}

template <class M, class... Ms>
inline constexpr bool names_each_once = (std::same_as<M, Ms> + ... + 0) == 1;

struct handle_access;

}  // namespace detail

// A reference to a classic actor of any type that accepts each of the
// messages Ms, with the same compile-time check as a direct send:
//
//   struct reply_to_me : tact::message { tact::handle<answer> reply_to; };
//   client c;               // accepts answer
//   q.reply_to = c;         // any actor type that receives answer&
//   q.reply_to | my_answer; // sends as `c | my_answer` would
//
// So a reply needs only the message types, not the asker's class. A send
// through a handle is a direct send: the same queue, the same delivery
// (the receiver's own `receive` overload for the type named here, resolved
// when the handle was made), no virtual call, nothing allocated. A message
// of a type derived from one the handle names is received as that named
// type. Poison pills go through a handle too (every actor accepts them).
//
// A handle is a small value (two pointers, and one function pointer per
// message type): copy it freely, compare it, store it in messages. Like a
// reference, it does not keep the actor alive: the rules for sending to a
// finished actor are those of a direct send. An empty (default-constructed)
// handle refuses sends with std::logic_error.
template <class... Ms>
class handle {
  static_assert(sizeof...(Ms) > 0, "tact: a handle names at least one message type");
  static_assert((std::derived_from<Ms, message> && ...),
                "tact: a handle names message types (derived from tact::message)");
  static_assert((!std::is_const_v<Ms> && ...) && (!std::is_reference_v<Ms> && ...),
                "tact: a handle names message types plainly: no const, no reference");
  static_assert((detail::names_each_once<Ms, Ms...> && ...),
                "tact: a handle names each message type once");

 public:
  // Empty: refers to no actor.
  handle() noexcept = default;

  // Refers to `receiver`, which must accept every message type named here.
  template <class A>
  requires std::derived_from<A, actor> && (receives<A, Ms> && ...)
  handle(A& receiver) noexcept  // NOLINT: implicit, as a reference binds
      : actor_{std::addressof(receiver)},
        target_{std::addressof(receiver)},
        runs_{&detail::deliver<A, Ms>...} {
    ((void)detail::dropped_unrun_known<A, Ms>, ...);
  }

  // From a handle that names at least the message types named here.
  template <class... Ns>
  requires(sizeof...(Ns) != sizeof...(Ms) || !std::same_as<handle<Ns...>, handle>) &&
      (detail::names_each_once<Ms, Ns...> && ...)
  handle(const handle<Ns...>& other) noexcept  // NOLINT: implicit, as a base reference binds
      : actor_{other.actor_},
        target_{other.target_},
        runs_{other.runs_[detail::handle_slot<Ms, Ns...>()]...} {}

  explicit operator bool() const noexcept { return actor_ != nullptr; }
  // The actor referred to, or nullptr. For identity and placement
  // (tact::next_to); a send goes through the handle.
  actor* get() const noexcept { return actor_; }

  // Two handles are equal when they refer to the same actor.
  template <class... Ns>
  bool operator==(const handle<Ns...>& other) const noexcept {
    return actor_ == other.actor_;
  }

 private:
  template <class...>
  friend class handle;
  friend struct detail::handle_access;

  actor* actor_ = nullptr;
  void* target_ = nullptr;  // the receiver as its own type, as its deliveries expect it
  detail::run_fn runs_[sizeof...(Ms)] = {};
};

// The two halves of a send through a handle, past the compile-time checks.
struct detail::handle_access {
  template <std::size_t Slot, class... Hs, class M>
  static void send(const handle<Hs...>& receiver, M& msg) {
    using as = std::tuple_element_t<Slot, std::tuple<Hs...>>;
    actor& a = checked(receiver);
    if constexpr (build::checks) message_access::mark_sent(msg);
    as& sent = msg;
    if (post_message(a, receiver.target_, sent, receiver.runs_[Slot], admission::make_room, true) ==
        posted::finished) [[unlikely]] {
      dispose(sent);
      report_send_to_finished(a, actor_type(a), typeid(as));
    }
  }

  template <class P, class... Hs>
  static void send_pill(const handle<Hs...>& receiver) {
    actor& a = checked(receiver);
    (void)dropped_unrun_known<actor, P>;
    if (!post_to(a, std::addressof(a), nullptr, &deliver_pill<actor, P>)) [[unlikely]]
      report_send_to_finished(a, actor_type(a), typeid(P));
  }

 private:
  template <class... Hs>
  static actor& checked(const handle<Hs...>& receiver) {
    if (!receiver) throw std::logic_error{"tact: a send through an empty handle"};
    return *receiver.actor_;
  }
};

// Sends `msg` through `receiver`, as send(actor, msg) does (same costs,
// same threads, same rules); returns the handle so sends cascade. Compiles
// only if the handle names M or exactly one base of M.
template <class... Hs, class M>
requires std::derived_from<std::remove_cvref_t<M>, message>
const handle<Hs...>& send(const handle<Hs...>& receiver, M&& msg) {
  using message_type = std::remove_reference_t<M>;
  detail::check_sent_by_reference<M>();
  constexpr std::size_t slot = detail::handle_slot<message_type, Hs...>();
  static_assert(slot != detail::npos_slot,
                "tact: the handle names neither this message type nor a base of it");
  static_assert(slot != detail::ambiguous_slot,
                "tact: the handle names several bases of this message type; name the type itself");
  if constexpr (slot < sizeof...(Hs)) detail::handle_access::send<slot>(receiver, msg);
  return receiver;
}

// Sends a poison pill through `receiver`.
template <class... Hs, class P>
requires poison_pill<P>
const handle<Hs...>& send(const handle<Hs...>& receiver, P) {
  detail::handle_access::send_pill<P>(receiver);
  return receiver;
}

// `receiver | msg1 | msg2`: the same as send, cascading.
template <class... Hs, class M>
requires std::derived_from<std::remove_cvref_t<M>, message> || poison_pill<std::remove_cvref_t<M>>
const handle<Hs...>& operator|(const handle<Hs...>& receiver, M&& msg) {
  return send(receiver, std::forward<M>(msg));
}

}  // namespace tact
