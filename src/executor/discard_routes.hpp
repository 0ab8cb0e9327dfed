#pragma once

#include <tact/detail/envelope.hpp>

namespace tact::detail {

// Hands an envelope that will never run to the drop registered for its run
// function (see on_discard), or leaves it untouched if none is; returns how
// many messages it held (1 for an envelope with no drop). Any thread.
std::uint32_t drop_unrun(const envelope& e) noexcept;

}  // namespace tact::detail
