#pragma once

#include <concepts>
#include <cstddef>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tact/detail/tx_core.hpp>
#include <tact/tx/message.hpp>

namespace tact::tx {

class behaviour;

namespace handler_detail {

template <class... Ts>
struct type_list {};

template <class F>
struct signature_of : signature_of<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) const> {
  using params = type_list<A...>;
};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) const noexcept> : signature_of<R (C::*)(A...) const> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...)> {
  static_assert(sizeof(C) == 0,
                "tact: a handler must not be `mutable`: behaviours are immutable and may run on "
                "several workers at once; change state with tx::become");
};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) noexcept> : signature_of<R (C::*)(A...)> {};
template <class R, class... A>
struct signature_of<R (*)(A...)> {
  using params = type_list<A...>;
};
template <class R, class... A>
struct signature_of<R (*)(A...) noexcept> : signature_of<R (*)(A...)> {};

template <class P>
inline constexpr bool immutable_param =
    !std::is_reference_v<P> ||
    (std::is_lvalue_reference_v<P> && std::is_const_v<std::remove_reference_t<P>>);

// Runs h on m if m's elements are exactly h's decayed parameter types, or
// if h takes the message itself (a catch-all).
template <class H, class... P>
bool try_handler(const H& h, const message& m, type_list<P...>) {
  static_assert((immutable_param<P> && ...),
                "tact: handler parameters are values or const references: a message is immutable "
                "and may be run again after a collision");
  if constexpr (std::is_same_v<type_list<P...>, type_list<const message&>>) {
    h(m);
    return true;
  } else {
    const auto* values = m.as<std::remove_cvref_t<P>...>();
    if (values == nullptr) return false;
    std::apply(h, *values);
    return true;
  }
}

template <class... H>
class behaviour_impl final : public detail::tx::behaviour_base {
 public:
  explicit behaviour_impl(H... handlers) : handlers_{std::move(handlers)...} {}

  bool dispatch(const message& m) const override {
    return std::apply(
        [&](const H&... h) {
          return (try_handler(h, m, typename signature_of<std::decay_t<H>>::params{}) || ...);
        },
        handlers_);
  }

  // A become builds one behaviour and frees the one it replaced: from the
  // library's per-thread cache, as messages are, not straight from the heap
  // (whose blocks are aligned for any type of ordinary alignment;
  // over-aligned captures take the heap). `delete this` in release() finds
  // these through the virtual destructor, with this type's size.
  static void* operator new(std::size_t size) {
    if constexpr (over_aligned)
      return ::operator new(size, std::align_val_t{alignof(behaviour_impl)});
    else
      return detail::allocate_block(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if constexpr (over_aligned)
      // Unsized: libstdc++ declares the sized aligned form only when sized
      // deallocation is on, which Clang before 19 leaves off by default.
      ::operator delete(block, std::align_val_t{alignof(behaviour_impl)});
    else
      detail::free_block(block, size);
  }

 private:
  static constexpr bool over_aligned =
      alignof(std::tuple<H...>) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  const std::tuple<H...> handlers_;
};

template <class H>
concept handler = (!std::derived_from<std::remove_cvref_t<H>, behaviour> &&
                   requires { &std::remove_cvref_t<H>::operator(); }) ||
                  std::is_function_v<std::remove_pointer_t<std::decay_t<H>>>;

}  // namespace handler_detail

// A transactional actor's behaviour: an immutable closure made of handlers
// tried in order against each message; the first whose parameter types are
// exactly the message's element types runs (a message no handler matches is
// dropped and counted). Handlers are lambdas (not `mutable`, not generic) or
// functions, taking the elements as values or const references and
// returning nothing; the state they capture is the actor's state:
//
//   tact::tx::behaviour counter(int n) {
//     return {[n](increment) { tact::tx::become(counter(n + 1)); },
//             [n](const tact::tx::actor_ref& customer, get) { tact::tx::send(customer, n); }};
//   }
//
// A handler taking `const tx::message&` matches every message: put it last,
// to forward or drop what the handlers before it do not take (see
// tx::forward).
//
// Handlers may run on several workers at once and may run again for the
// same message after losing a become race, so they must not mutate what
// they capture or anything shared; their only effects are tx::send,
// tx::become, tx::create and tx::on_commit, which take place together when
// the handler returns (see transaction.hpp).
//
// A behaviour is a handle: copying it shares the closure (one atomic
// increment). Building one allocates once, from a per-thread cache of
// small blocks (a closure over 256 bytes comes from the heap). A moved-from behaviour is empty;
// become, create and spawn refuse it (std::invalid_argument).
//
// Capture other actors' references freely, but not the actor's own: a
// behaviour holding its actor's reference keeps the actor alive for good
// (a cycle). Inside a handler, tx::self() is the actor's reference.
class behaviour {
 public:
  template <class... H>
  requires(sizeof...(H) > 0 && (handler_detail::handler<H> && ...))
      behaviour(H&&... handlers)  // NOLINT: implicit, so `return {h1, h2};` reads well
      : impl_{new handler_detail::behaviour_impl<std::decay_t<H>...>(
            std::forward<H>(handlers)...)} {}

  behaviour(const behaviour& other) noexcept : impl_{other.impl_} {
    if (impl_ != nullptr) impl_->retain();
  }
  behaviour(behaviour&& other) noexcept : impl_{std::exchange(other.impl_, nullptr)} {}
  behaviour& operator=(behaviour other) noexcept {
    std::swap(impl_, other.impl_);
    return *this;
  }
  ~behaviour() {
    if (impl_ != nullptr) impl_->release();
  }

  // For the library: gives up this handle's reference (the handle is left
  // empty and may only be destroyed or assigned).
  detail::tx::behaviour_base* release() && noexcept { return std::exchange(impl_, nullptr); }

 private:
  detail::tx::behaviour_base* impl_;
};

}  // namespace tact::tx
