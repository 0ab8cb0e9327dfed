#pragma once

#include <tact/actor.hpp>

namespace tact::detail {

// Closes a's anchor, if it has one: from here no holder of the anchor
// reaches the actor. Waits for a holder that has it locked. Called when
// the actor finishes, before its allocation action.
void close_anchor(actor& a) noexcept;

// Closes it and drops the actor's reference to it: when the actor is
// destroyed (finished or not).
void drop_anchor(actor& a) noexcept;

}  // namespace tact::detail
