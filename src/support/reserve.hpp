#pragma once

#include <algorithm>
#include <cstddef>

namespace tact::detail {

// Makes `v` able to hold `n` elements, so that the pushes up to there
// cannot throw, growing geometrically as push_back would:
// std::vector::reserve(size() + 1) alone reallocates (and copies
// everything) on every call, which made n behaviours waiting at once
// cost n^2. Throws what the allocation throws, and then `v` is unchanged.
template <class Vector>
void reserve_at_least(Vector& v, std::size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

}  // namespace tact::detail
