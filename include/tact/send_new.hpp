#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <tact/allocation.hpp>
#include <tact/detail/block_pool.hpp>
#include <tact/message.hpp>
#include <tact/send.hpp>

namespace tact {

// A message whose contents are a plain struct T, so they can be brace- or
// designated-initialised (a class derived from tact::message cannot be: its
// base is polymorphic). The receiver reads T's members directly:
//
//   struct greeting { std::string text; int times = 1; };
//   struct greeter : tact::actor {
//     tact::allocation receive(tact::payload<greeting>& g);  // g.text, g.times
//   };
//   tact::send_new(greeter, greeting{.text = "hello"});
//
// It is an ordinary message otherwise: it can be a member, live on the
// stack, be sent by reference.
template <class T>
requires std::is_class_v<T> && (!std::is_final_v<T>) && (!std::derived_from<T, message>)
struct payload : message, T {
  payload() = default;
  explicit payload(T contents) : T(std::move(contents)) {}
};

namespace detail {

// A message send_new made: from the per-thread block cache that
// transactional messages use, freed by its delivery (allocation::Delete:
// the virtual destructor reaches this class's operator delete, sized).
template <class M>
struct made final : M {
  template <class... Args>
  explicit made(Args&&... args) : M(std::forward<Args>(args)...) {}

  static void* operator new(std::size_t size) {
    if constexpr (over_aligned)
      return ::operator new(size, std::align_val_t{alignof(made)});
    else
      return allocate_block(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if constexpr (over_aligned)
      ::operator delete(block, std::align_val_t{alignof(made)});
    else
      free_block(block, size);
  }

 private:
  static constexpr bool over_aligned = alignof(M) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
};

// What send_new<M> makes: M itself if it is a message, else payload<M>.
template <class M>
struct made_type {
  using type = payload<M>;
};
template <std::derived_from<message> M>
struct made_type<M> {
  using type = M;
};

}  // namespace detail

// Makes an M from `args` and sends it to `receiver` (an actor or a
// tact::handle), in one call; the receiver's delivery frees it. M is a
// message type, built as M(args...), or a plain struct, sent as payload<M>
// built from M{args...}:
//
//   tact::send_new<resize>(window, 800, 600);           // resize(800, 600)
//   tact::send_new<greeting>(greeter, "hello", 3);      // payload<greeting>
//
// The message comes from a per-thread cache (no call into the heap in a
// steady flow of sends), is sent as an M (the receiver's `receive(M&)`
// runs) and is freed after its receive returns, or at once if the receiver
// has finished. Throws what the construction throws, or std::bad_alloc,
// and then nothing was sent. Safe from any thread, as send is.
template <class M, class R, class... Args>
R& send_new(R& receiver, Args&&... args) {
  using message_type = typename detail::made_type<M>::type;
  static_assert(!std::is_final_v<message_type>,
                "tact: send_new makes a class derived from the message type: it cannot be final");
  std::unique_ptr<detail::made<message_type>> m;
  if constexpr (std::derived_from<M, message>)
    m.reset(new detail::made<message_type>(std::forward<Args>(args)...));
  else
    m.reset(new detail::made<message_type>(M{std::forward<Args>(args)...}));
  m->set_allocation(allocation::Delete);
  send(receiver, static_cast<message_type&>(*m));
  m.release();  // the delivery frees it (or the send did, to a finished actor)
  return receiver;
}

// Sends a copy of `contents` (a plain struct, often a designated
// initializer) as a payload: `tact::send_new(greeter, greeting{.text = "hi"})`.
template <class R, class T>
requires std::is_class_v<std::remove_cvref_t<T>> &&
    (!std::derived_from<std::remove_cvref_t<T>, message>)
R& send_new(R& receiver, T&& contents) {
  return send_new<std::remove_cvref_t<T>>(receiver, std::forward<T>(contents));
}

}  // namespace tact
