#pragma once

#include <cstddef>

namespace tact::detail {

// Two cache lines: x86 prefetches lines in adjacent pairs, so objects that
// different threads write must be this far apart to stop false sharing.
inline constexpr std::size_t false_sharing_range = 128;

// T on cache lines of its own: an array of padded<T> never puts two
// elements on one line pair.
template <class T>
struct alignas(false_sharing_range) padded final : T {
  using T::T;
};

}  // namespace tact::detail
