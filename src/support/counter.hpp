#pragma once

#include <atomic>
#include <cstdint>

namespace tact::detail {

// A statistic with a single writer. Incremented with a plain load and
// store (no read-modify-write, no lock prefix); atomic only so that other
// threads may read it while it changes without a data race.
class counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

}  // namespace tact::detail
