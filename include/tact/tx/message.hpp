#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tact/detail/tx_core.hpp>
#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::tx {

template <class... Ts>
class message_of;

// A transactional message: an immutable tuple of values, addressed to one
// actor. Built by tx::send; seen by users only as the message of a
// rollback report (see rollback), where they may ask what it holds.
//
// Its elements are the decayed types of the arguments given to send:
// `send(a, 1, std::string{"x"})` and `send(a, 2, std::string{})` carry
// (int, std::string). Handlers match on exactly those types.
class TACT_API message {
 public:
  message(const message&) = delete;
  message& operator=(const message&) = delete;

  // Whether the elements are exactly Ts....
  template <class... Ts>
  bool is() const noexcept {
    return type_ == &detail::tx::message_type_of<Ts...>;
  }
  // The elements, if they are exactly Ts...; otherwise nullptr.
  template <class... Ts>
  const std::tuple<Ts...>* as() const noexcept;

  std::size_t size() const noexcept { return type_->size; }
  // The first element if it is an actor reference (by convention, whom to
  // answer), else nullptr.
  const actor_ref* customer() const noexcept { return type_->customer(*this); }
  // "(int, std::string)": the element types, demangled.
  std::string describe() const;

  // The actor the message was sent to.
  const actor_ref& target() const noexcept { return target_; }

 protected:
  using destroy_fn = void (*)(message*) noexcept;
  message(const detail::tx::message_type* type, destroy_fn destroy) noexcept
      : type_{type}, destroy_{destroy} {}
  ~message() = default;

 private:
  friend struct message_access;
  const detail::tx::message_type* type_;
  destroy_fn destroy_;
  actor_ref target_;
  message* next_ = nullptr;  // in a transaction's chain of staged sends
};

template <class... Ts>
class message_of final : public message {
 public:
  template <class... Args>
  explicit message_of(Args&&... args)
      : message{&detail::tx::message_type_of<Ts...>, &destroy},
        values{std::forward<Args>(args)...} {}

  const std::tuple<Ts...> values;

  // Messages come and go once per send: from the library's per-thread
  // cache, not straight from the heap (whose blocks are aligned for any
  // type of ordinary alignment; over-aligned elements take the heap).
  static void* operator new(std::size_t size) {
    if constexpr (over_aligned)
      return ::operator new(size, std::align_val_t{alignof(message_of)});
    else
      return detail::tx::allocate_message(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if constexpr (over_aligned)
      ::operator delete(block, size, std::align_val_t{alignof(message_of)});
    else
      detail::tx::free_message(block, size);
  }

 private:
  static constexpr bool over_aligned =
      alignof(std::tuple<Ts...>) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  static void destroy(message* m) noexcept { delete static_cast<message_of*>(m); }
};

}  // namespace tact::tx

template <class... Ts>
const ::tact::tx::actor_ref* tact::detail::tx::customer_of(const ::tact::tx::message& m) noexcept {
  if constexpr (sizeof...(Ts) > 0) {
    using first = std::tuple_element_t<0, std::tuple<Ts...>>;
    if constexpr (std::is_same_v<first, ::tact::tx::actor_ref>)
      return &std::get<0>(*m.as<Ts...>());
  }
  return nullptr;
}

namespace tact::tx {

template <class... Ts>
const std::tuple<Ts...>* message::as() const noexcept {
  return is<Ts...>() ? &static_cast<const message_of<Ts...>*>(this)->values : nullptr;
}

// The library's access to a message's innards. Not for users.
struct message_access {
  static actor_ref& target(message& m) noexcept { return m.target_; }
  // Addresses m, which has no target yet, to `c`, adopting one reference.
  static void address(message& m, detail::tx::cell* c) noexcept { m.target_.cell_ = c; }
  // m gives up its reference to its target without dropping it.
  static void disown_target(message& m) noexcept { m.target_.cell_ = nullptr; }
  static message*& next(message& m) noexcept { return m.next_; }
  static void destroy(message* m) noexcept { m->destroy_(m); }
};

}  // namespace tact::tx
