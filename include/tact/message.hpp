#pragma once

#include <atomic>

#include <tact/allocation.hpp>
#include <tact/export.hpp>

namespace tact {

namespace detail {
struct message_access;
}

// Base of every message a classic actor receives. A message is never
// copied by a send: the sender keeps it alive until its receiver is done
// with it (or heap-allocates it and sets allocation::Delete, so the engine
// frees it after delivery). The engine reads a message only as it delivers
// it, before the receive starts, so the sender may free or reuse it once
// the receive has returned, or earlier, once the receiving behaviour says
// it will not touch it again (docs/concepts.md, "Who owns a classic
// message"). One message may be sent to several actors at once. A message
// belongs to no system, and may outlive any.
//
//   struct greeting : tact::message { std::string text; };
class TACT_API message {
 public:
  message() noexcept = default;
  // A message is never "finished": Finished is stored as Nodelete (the Cforall
  // thesis's semantics), so reading it back before set_allocation gives Nodelete.
  explicit message(allocation a) noexcept
      : allocation_{a == allocation::Finished ? allocation::Nodelete : a} {}

  // How a message is stored is a property of the object, not of its value:
  // a copy starts as Nodelete and unsent, an assignment keeps both.
  message(const message&) noexcept {}
  message& operator=(const message&) noexcept { return *this; }

  // Virtual so that Delete and Destroy reach the most derived destructor.
  // With checks on, destroying a message that was never sent is reported,
  // to the system the calling code runs in (see actor::actor()), or on
  // standard error when none is running.
  virtual ~message();

  // What the engine does with this message once its receive returns:
  // nothing (Nodelete: its sender owns it), delete it or destroy it. The
  // engine reads it as it delivers the message, before the receive, and a
  // set_allocation from that receive changes what it does after; it never
  // reads the message after the receive. Only from a behaviour that
  // received this message, or by its owner while it is not in flight.
  allocation get_allocation() const noexcept { return allocation_; }
  void set_allocation(allocation a) noexcept;

  // With checks on, a message destroyed without ever being sent is
  // reported: it is often a message made and forgotten. This one may go
  // unsent (a reply kept ready, a message for a path a run may not take),
  // so its destruction is not reported. For this object only (a copy starts
  // unsent again); no effect without checks. By its owner, while it is not
  // in flight, or from its constructor for a whole type.
  void allow_unsent() noexcept { sent_.store(true, std::memory_order_relaxed); }

 private:
  friend struct detail::message_access;
  allocation allocation_ = allocation::Nodelete;
  std::atomic<bool> sent_{false};  // sent, or allowed not to be; read only with checks on
};

// Poison pills: every actor accepts them. After the messages queued before
// it, the actor takes the pill's action: delete_msg deletes it (made with
// `new`), destroy_msg runs its destructor, finished_msg only marks it
// finished (stack or member actors). Further sends to it are errors.
struct delete_msg_t {
  explicit constexpr delete_msg_t() = default;
};
struct destroy_msg_t {
  explicit constexpr destroy_msg_t() = default;
};
struct finished_msg_t {
  explicit constexpr finished_msg_t() = default;
};
inline constexpr delete_msg_t delete_msg{};
inline constexpr destroy_msg_t destroy_msg{};
inline constexpr finished_msg_t finished_msg{};

}  // namespace tact
