#pragma once

// The radix_sort workload's parameters, draws and expected result, for both
// programs that run it (tact.cpp, which documents the protocol, and
// caf.cpp): one definition keeps the engines sorting the same values, held
// to the same check.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "savina.hpp"
#include "suite.hpp"

namespace suite::radix_sort {

struct params {
  std::int64_t values;     // at least 1 (100,000; --quick 5,000)
  std::int64_t max_value;  // a power of two, at least 2 (2^60; --quick 2^60)
};

inline params read(options& o) {
  const params p{.values = o.param("values", 100'000, 5'000),
                 .max_value = o.param("max_value", std::int64_t{1} << 60, std::int64_t{1} << 60)};
  check(p.values >= 1 && p.max_value >= 2 && (p.max_value & (p.max_value - 1)) == 0,
        "--values must be at least 1, --max_value a power of two of at least 2");
  return p;
}

// The seed of the source's draws.
inline constexpr std::int64_t seed = 2048;

// IntSourceActor's draw.
inline std::int64_t draw(suite::savina::pseudo_random& random, std::int64_t max_value) {
  const std::int64_t v = random.next_long();
  return (v < 0 ? -v : v) % max_value;
}

// The values the validator must receive: the source's draws, sorted.
inline std::vector<std::int64_t> expected_values(const params& p) {
  std::vector<std::int64_t> expected(static_cast<std::size_t>(p.values));
  suite::savina::pseudo_random replay{seed};
  for (auto& v : expected) v = draw(replay, p.max_value);
  std::sort(expected.begin(), expected.end());
  return expected;
}

// 1 start + values through each of the stages and into the validator.
inline std::uint64_t messages(const params& p, std::size_t stages) {
  return 1 + static_cast<std::uint64_t>(p.values) * (stages + 1);
}

}  // namespace suite::radix_sort
