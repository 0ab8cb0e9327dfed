#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include <tact/detail/tx_core.hpp>

namespace tact::tx {

struct message_access;

// A transactional actor's identity, and the only way to send to it. Copy it
// freely: the actor lives while a reference to it, or a message for it,
// exists. A default-constructed (or reset) reference is empty; sending to
// it drops the message and counts it, it never crashes.
//
// Copying costs one atomic increment, dropping one decrement. A reference
// may outlive its actor's system, to be copied, compared or dropped (the
// actor goes with the last one), but nothing may be sent through it then,
// nor a timer, widget or ask made for it: with checks on, that aborts,
// naming the message. Between stop() and the system's destruction a send
// through it is a dead letter.
class actor_ref {
 public:
  actor_ref() noexcept = default;
  actor_ref(const actor_ref& other) noexcept : cell_{other.cell_} {
    if (cell_ != nullptr) detail::tx::retain(cell_);
  }
  actor_ref(actor_ref&& other) noexcept : cell_{std::exchange(other.cell_, nullptr)} {}
  actor_ref& operator=(actor_ref other) noexcept {
    std::swap(cell_, other.cell_);
    return *this;
  }
  ~actor_ref() { reset(); }

  explicit operator bool() const noexcept { return cell_ != nullptr; }
  friend bool operator==(const actor_ref& a, const actor_ref& b) noexcept {
    return a.cell_ == b.cell_;
  }

  // Drops this reference; the handle becomes empty.
  void reset() noexcept {
    if (cell_ != nullptr) detail::tx::release(std::exchange(cell_, nullptr));
  }

  // For the library: adopts one reference to `c`.
  static actor_ref adopt(detail::tx::cell* c) noexcept { return actor_ref{c}; }
  detail::tx::cell* cell() const noexcept { return cell_; }

 private:
  friend struct message_access;
  explicit actor_ref(detail::tx::cell* c) noexcept : cell_{c} {}
  detail::tx::cell* cell_ = nullptr;
};

}  // namespace tact::tx

template <>
struct std::hash<tact::tx::actor_ref> {
  std::size_t operator()(const tact::tx::actor_ref& r) const noexcept {
    return std::hash<const void*>{}(r.cell());
  }
};
