#pragma once

#include <chrono>
#include <concepts>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <tact/build_config.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/detail/reply_slot.hpp>
#include <tact/handle.hpp>
#include <tact/message.hpp>
#include <tact/send.hpp>

namespace tact {

// Why an ask has no reply.
enum class ask_error {
  timeout,   // none came in time (a later one is dropped)
  failed,    // the asked behaviour threw (see ask_result::exception)
  no_reply,  // the request was dropped unanswered: it can never come
  node_down, // the actor asked is on another node, which went down or whose
             // connection was lost (docs/remote.md): it can never come
};

// Thrown by ask_result::value() on a timeout, a request left unanswered,
// or a node down.
class ask_failed : public std::runtime_error {
 public:
  explicit ask_failed(ask_error e)
      : std::runtime_error{e == ask_error::timeout     ? "tact: ask timed out"
                           : e == ask_error::node_down ? "tact: the node asked went down"
                                                       : "tact: the request was dropped unanswered"},
        error_{e} {}
  ask_error error() const noexcept { return error_; }

 private:
  ask_error error_;
};

// The outcome of an ask: the reply, or why there is none. A plain value,
// which may outlive its system. Reading value() without a reply throws,
// so a timeout cannot pass unnoticed:
//
//   if (auto balance = tact::ask(account, get_balance{}, 100ms)) use(*balance);
//   else if (balance.error() == tact::ask_error::timeout) retry();
template <class T>
class [[nodiscard]] ask_result {
 public:
  ask_result(T value) : value_{std::move(value)} {}  // NOLINT: implicit
  ask_result(ask_error e, std::exception_ptr cause = {}) : error_{e}, cause_{std::move(cause)} {}

  bool has_value() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  // The reply. Without one: rethrows the asked behaviour's exception
  // (failed), else throws ask_failed.
  T& value() & {
    check();
    return *value_;
  }
  const T& value() const& {
    check();
    return *value_;
  }
  T&& value() && {
    check();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Only without a reply.
  ask_error error() const noexcept { return error_; }
  // The asked behaviour's exception, when error() is failed.
  std::exception_ptr exception() const noexcept { return cause_; }

 private:
  void check() const {
    if (value_) return;
    if (error_ == ask_error::failed && cause_) std::rethrow_exception(cause_);
    throw ask_failed{error_};
  }
  std::optional<T> value_;
  ask_error error_ = ask_error::timeout;
  std::exception_ptr cause_;
};

namespace detail {

template <class T>
ask_result<T> outcome(reply_slot<T>& slot, reply_base::state s) {
  switch (s) {
    case reply_base::replied:
      return ask_result<T>{slot.take()};
    case reply_base::failed:
      return ask_result<T>{ask_error::failed, slot.error()};
    case reply_base::no_reply:
      return ask_result<T>{ask_error::no_reply};
    case reply_base::node_down:
      return ask_result<T>{ask_error::node_down};
    default:  // abandoned at the deadline, or timed out on the way
      return ask_result<T>{ask_error::timeout};
  }
}

}  // namespace detail

template <class R>
class request;

namespace detail {
struct request_access {
  template <class R>
  static void attach(request<R>& r, std::shared_ptr<reply_slot<R>> slot) noexcept {
    r.slot_ = std::move(slot);
  }
  // The request's slot, taken: its answer no longer goes through it (a
  // request forwarded to another node, whose answer comes back apart).
  template <class R>
  static std::shared_ptr<reply_slot<R>> detach(request<R>& r) noexcept {
    return std::move(r.slot_);
  }
};
}  // namespace detail

// A classic message that expects one reply of type R: derive from it and
// answer with reply() inside receive. Ask it with tact::ask.
//
//   struct get_balance : tact::request<long> {};
//   tact::allocation receive(get_balance& m) { m.reply(balance_); return Nodelete; }
//
// The first reply counts; later ones are ignored. A request destroyed
// unanswered answers its asker with ask_error::no_reply; if the behaviour
// receiving it throws, the asker gets the exception (ask_error::failed).
// Copies and moves start unattached: each ask attaches its own. A request
// kept by its receiver may outlive the system: its ask has ended by then,
// so a reply or its destruction does nothing.
template <class R>
class request : public message {
 public:
  using reply_type = R;

  request() = default;
  request(const request& other) : message{other} {}
  request& operator=(const request& other) {
    message::operator=(other);
    return *this;
  }
  ~request() override {
    if (slot_) slot_->fail_unanswered();
  }

  template <class U = R>
  void reply(U&& value) const {
    if (slot_) slot_->reply(std::forward<U>(value));
  }

  // Called by the delivery when the receiving behaviour throws.
  void behaviour_failed(std::exception_ptr error) const noexcept {
    if (slot_) slot_->fail(std::move(error));
  }

 private:
  friend struct detail::request_access;
  std::shared_ptr<detail::reply_slot<R>> slot_;
};

template <class M>
concept request_message = requires { typename M::reply_type; } &&
    std::derived_from<M, request<typename M::reply_type>>;

namespace detail {

// An ask's body, once the receiver's type is checked: `receiver` is an
// actor or a handle to `target`.
template <class R, class M>
ask_result<typename std::remove_cvref_t<M>::reply_type> ask_of(actor& target, R& receiver, M&& msg,
                                                               std::chrono::nanoseconds timeout) {
  using message_type = std::remove_cvref_t<M>;
  using reply = typename message_type::reply_type;
  executor& ex = actor_access::executor_of(target);
  refuse_ask_that_cannot_wait();
  const auto deadline = ask_deadline(ex, timeout);
  // The caller's message goes as a copy: it counts as sent, even if the
  // copy cannot be made.
  if constexpr (build::checks && !std::is_const_v<std::remove_reference_t<M>>)
    message_access::mark_sent(msg);
  auto slot = std::make_shared<reply_slot<reply>>();
  // Ours until the send takes it (one that throws leaves it to us).
  auto m = std::make_unique<message_type>(std::forward<M>(msg));
  m->set_allocation(allocation::Delete);
  request_access::attach<reply>(*m, slot);
  send(receiver, *m);
  m.release();  // the receiver's delivery deletes it (or the send did, to a finished actor)
  return outcome(*slot, await_reply(ex, *slot, deadline));
}

}  // namespace detail

// Sends `msg` (a request<R>, moved to the heap) to `receiver` and waits for
// the reply, at most `timeout` (nanoseconds::max(): no deadline). Safe from
// any number of threads at once.
//
// * From a thread outside the actor world, the thread runs queued work as
//   a guest worker while it waits (classic actors still run one message
//   at a time); with none to run it sleeps.
// * Inside a classic behaviour, the behaviour is suspended on a fiber
//   until the answer (or the deadline), and its worker runs other actors
//   meanwhile; its own actor runs nothing else until the behaviour
//   returns. Two actors that ask each other wait until a timeout.
// * Inside a behaviour of an actor bound to a sponsor, the sponsor's
//   thread sleeps.
// * Inside a transactional handler, or on a worker's thread outside any
//   behaviour: std::logic_error, before anything is sent.
// * Of an actor whose system has been destroyed (a finished actor that
//   outlived it): with checks on, aborts before anything is sent.
//
// Allocates the request and its reply slot; see docs/ask.md.
template <class A, class M>
requires std::derived_from<A, actor> && request_message<std::remove_cvref_t<M>> &&
    receives<A, std::remove_cvref_t<M>>
ask_result<typename std::remove_cvref_t<M>::reply_type> ask(A& receiver, M&& msg,
                                                            std::chrono::nanoseconds timeout) {
  return detail::ask_of(receiver, receiver, std::forward<M>(msg), timeout);
}

// The same through a handle that names the request's type (or a base of
// it); an empty handle: std::logic_error, before anything is sent.
template <class... Hs, class M>
requires request_message<std::remove_cvref_t<M>> &&
    (detail::handle_slot<std::remove_cvref_t<M>, Hs...>() < sizeof...(Hs))
ask_result<typename std::remove_cvref_t<M>::reply_type> ask(const handle<Hs...>& receiver, M&& msg,
                                                            std::chrono::nanoseconds timeout) {
  if (!receiver) throw std::logic_error{"tact: an ask through an empty handle"};
  return detail::ask_of(*receiver.get(), receiver, std::forward<M>(msg), timeout);
}

}  // namespace tact
