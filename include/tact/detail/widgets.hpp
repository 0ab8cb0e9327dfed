#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <tact/detail/tx_core.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/transaction.hpp>

// What the widget templates share. Not for users.
namespace tact::widgets::detail {

// A new actor in `system`. A customer that `hears_failures` is sent a
// tx::failure when a request naming it rolls back or matches no handler:
// nobody knows the actor yet, so setting the flag races with nothing.
inline tx::actor_ref spawn_in(actor_system& system, tx::behaviour b, bool hears_failures,
                              tx::mode m = tx::mode::parallel) {
  tx::actor_ref made = tx::spawn(system, std::move(b), m);
  made.cell()->told_of_failures = hears_failures;
  return made;
}

// A widget lives beside the actors it serves, in their system, so it can
// be made inside a handler and outside one alike.
inline actor_system& system_of(const tx::actor_ref& near) noexcept {
  return tact::detail::tx::system_of(near.cell());
}

// In the destructor of a node of an immutable list, frees the rest of the
// list iteratively: freed recursively, a long list (a serializer's queue)
// would overflow the stack. A node whose count drops to one is ours alone
// (nobody can copy a reference they do not hold), so taking its link is
// safe; nodes must be made non-const (make_shared<Node>) for that.
template <class Node>
void free_rest(std::shared_ptr<const Node>& next) noexcept {
  std::shared_ptr<const Node> rest = std::move(next);
  while (rest != nullptr && rest.use_count() == 1)
    rest = std::move(const_cast<Node&>(*rest).next);  // NOLINT: see above
}

inline void require(const tx::actor_ref& r, const char* what) {
  if (!r) throw std::invalid_argument{what};
}

// The customer of a request a widget must answer through.
inline const tx::actor_ref& customer_of(const tx::message& request, const char* widget) {
  const tx::actor_ref* c = request.customer();
  if (c == nullptr || !*c)
    throw std::invalid_argument{std::string{"tact: "} + widget +
                                " takes requests whose first element is the customer, not " +
                                request.describe()};
  return *c;
}

}  // namespace tact::widgets::detail
