#pragma once

#include <tact/detail/envelope.hpp>

namespace tact::detail {

// Hands an envelope that will never run to the drop registered for its run
// function (see on_discard), or leaves it untouched if none is. Any thread.
void drop_unrun(const envelope& e) noexcept;

}  // namespace tact::detail
