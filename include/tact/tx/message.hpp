#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include <tact/detail/tx_core.hpp>
#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::tx {

template <class... Ts>
class message_of;

// Whether messages with an element of type T can be copied when forwarded
// (see tx::forward). Every message type carries the code that copies it,
// so this must be false for a type that claims to be copyable but is not:
// std::is_copy_constructible is true for a std::vector<std::unique_ptr<X>>,
// whose copy then fails to compile. Containers, pairs, tuples, optionals
// and variants are looked into; for a class of your own that holds such a
// container, say so (forwarding it then throws std::logic_error):
//
//   template <> inline constexpr bool tact::tx::copyable<batch> = false;
template <class T>
inline constexpr bool copyable = std::is_copy_constructible_v<T>;
template <class T, class D>
inline constexpr bool copyable<std::unique_ptr<T, D>> = false;
template <class A, class B>
inline constexpr bool copyable<std::pair<A, B>> = copyable<A> && copyable<B>;
template <class... T>
inline constexpr bool copyable<std::tuple<T...>> = (copyable<T> && ...);
template <class T>
inline constexpr bool copyable<std::optional<T>> = copyable<T>;
template <class... T>
inline constexpr bool copyable<std::variant<T...>> = (copyable<T> && ...);
template <template <class...> class C, class T, class... Rest>
requires requires { typename C<T, Rest...>::value_type; }
inline constexpr bool copyable<C<T, Rest...>> =
    copyable<typename C<T, Rest...>::value_type> && std::is_copy_constructible_v<C<T, Rest...>>;

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
    return type() == &detail::tx::message_type_of<Ts...>;
  }
  // The elements, if they are exactly Ts...; otherwise nullptr.
  template <class... Ts>
  const std::tuple<Ts...>* as() const noexcept;

  std::size_t size() const noexcept { return type()->size; }
  // The first element if it is an actor reference (by convention, whom to
  // answer), else nullptr.
  const actor_ref* customer() const noexcept { return type()->customer(*this); }
  // "(int, std::string)": the element types, demangled.
  std::string describe() const;

  // The actor the message was sent to.
  const actor_ref& target() const noexcept { return target_; }

 protected:
  explicit message(const detail::tx::message_type* type) noexcept
      : type_{reinterpret_cast<std::uintptr_t>(type)} {}
  ~message() = default;

 private:
  friend struct message_access;
  static_assert(alignof(detail::tx::message_type) >= 4,
                "a type's address leaves its two low bits free");
  static constexpr std::uintptr_t request_bit = 1;
  static constexpr std::uintptr_t counted_bit = 2;

  const detail::tx::message_type* type() const noexcept {
    return reinterpret_cast<const detail::tx::message_type*>(type_ & ~(request_bit | counted_bit));
  }

  // The type (also how to destroy the message), and in its address's two
  // low bits two marks. The request mark: a request's customer, if it
  // listens, is told when it rolls back or matches no handler. A request
  // is a message naming a customer first, unless a handler sent it
  // passing on the customer of the message it handles (a delegation or a
  // side copy cannot fail the request); see note_request. The counted
  // mark: its sender counted it in the receiver's mailbox gauge, so its
  // delivery counts it received (an actor serialized by collisions gets
  // its gauge while messages sent before are still on their way, and
  // those must not count). A byte of its own took the header from three
  // words to four: every message whose elements fill a word took a block
  // 16 bytes larger.
  std::uintptr_t type_;
  actor_ref target_;
  message* next_ = nullptr;  // in a transaction's chain of staged sends
};

template <class... Ts>
class message_of final : public message {
 public:
  template <class... Args>
  explicit message_of(Args&&... args)
      : message{&detail::tx::message_type_of<Ts...>}, values{std::forward<Args>(args)...} {}

  // No byte of its own when it is empty (a message that is its type
  // alone, as an increment): the message is then its three-word header.
  [[no_unique_address]] const std::tuple<Ts...> values;

  // Messages come and go once per send: from the library's per-thread
  // cache, not straight from the heap (whose blocks are aligned for any
  // type of ordinary alignment; over-aligned elements take the heap).
  static void* operator new(std::size_t size) {
    if constexpr (over_aligned)
      return ::operator new(size, std::align_val_t{alignof(message_of)});
    else
      return detail::allocate_block(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if constexpr (over_aligned)
      // Unsized: libstdc++ declares the sized aligned form only when sized
      // deallocation is on, which Clang before 19 leaves off by default.
      ::operator delete(block, std::align_val_t{alignof(message_of)});
    else
      detail::free_block(block, size);
  }

 private:
  static constexpr bool over_aligned =
      alignof(std::tuple<Ts...>) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
};

}  // namespace tact::tx

namespace tact::detail::tx {
// Whether a message of Ts... has a customer: an actor reference first.
template <class... Ts>
inline constexpr bool customer_first = false;
template <class T, class... Ts>
inline constexpr bool customer_first<T, Ts...> = std::is_same_v<T, ::tact::tx::actor_ref>;
}  // namespace tact::detail::tx

template <class... Ts>
const ::tact::tx::actor_ref* tact::detail::tx::customer_of(const ::tact::tx::message& m) noexcept {
  if constexpr (customer_first<Ts...>)
    return &std::get<0>(*m.as<Ts...>());
  else
    return nullptr;
}

// Not `delete`: a message to destroy is never null, and its block goes
// straight back to the cache.
template <class... Ts>
void tact::detail::tx::destroy_of(::tact::tx::message* m) noexcept {
  auto* const self = static_cast<::tact::tx::message_of<Ts...>*>(m);
  self->~message_of();
  ::tact::tx::message_of<Ts...>::operator delete(self, sizeof(*self));
}

template <class... Ts>
::tact::tx::message* tact::detail::tx::copy_of(const ::tact::tx::message& m,
                                               const ::tact::tx::actor_ref* customer) {
  using ::tact::tx::message_of;
  if constexpr (!(::tact::tx::copyable<Ts> && ...)) {
    throw std::logic_error{"tact: cannot forward a message of " + m.describe() +
                           ": its elements are not all copyable"};
  } else {
    const std::tuple<Ts...>& values = *m.as<Ts...>();
    if (customer == nullptr)
      return std::apply([](const Ts&... v) { return new message_of<Ts...>(v...); }, values);
    if constexpr (customer_first<Ts...>) {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return new message_of<Ts...>(*customer, std::get<I + 1>(values)...);
      }(std::make_index_sequence<sizeof...(Ts) - 1>{});
    } else {
      throw std::invalid_argument{"tact: cannot give a new customer to a message of " +
                                  m.describe() + ": its first element is not an actor_ref"};
    }
  }
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
  static void destroy(message* m) noexcept { m->type()->destroy(m); }
  static void mark_request(message& m) noexcept { m.type_ |= message::request_bit; }
  static bool is_request(const message& m) noexcept {
    return (m.type_ & message::request_bit) != 0;
  }
  static void mark_counted(message& m) noexcept { m.type_ |= message::counted_bit; }
  static bool is_counted(const message& m) noexcept {
    return (m.type_ & message::counted_bit) != 0;
  }
  // A new, unaddressed copy of m's elements, with the customer replaced if
  // one is given. std::logic_error if they are not copyable,
  // std::invalid_argument for a new customer when m has none.
  static message* copy(const message& m, const actor_ref* customer = nullptr) {
    return m.type()->copy(m, customer);
  }
};

}  // namespace tact::tx

inline void tact::detail::tx::staging::stage(::tact::tx::message* m, cell* to) noexcept {
  using ::tact::tx::message_access;
  if (to == actor && !borrowed)
    borrowed = true;
  else
    retain(to);
  message_access::address(*m, to);
  *last = m;
  last = &message_access::next(*m);
}

inline void tact::detail::tx::send(::tact::tx::message* m, cell* to) {
  if (staging* const s = staged; s != nullptr && to != nullptr) {
    s->stage(m, to);
    return;
  }
  send_now(m, to);
}
