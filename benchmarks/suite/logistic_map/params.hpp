#pragma once

// The logistic_map workload's parameters, series and message count, for
// both programs that run it (tact.cpp, which documents the protocol, and
// caf.cpp): one definition keeps the engines computing the same terms, held
// to the same check.
#include <cstddef>
#include <cstdint>

#include "suite.hpp"

namespace suite::logistic_map {

struct params {
  std::int64_t series;  // at least 1 (10; --quick 10)
  std::int64_t terms;   // per series, not negative (100,000; --quick 5,000)
};

inline params read(options& o) {
  const params p{.series = o.param("series", 10, 10), .terms = o.param("terms", 100'000, 5'000)};
  check(p.series >= 1 && p.terms >= 0, "--series must be at least 1, --terms not negative");
  return p;
}

inline constexpr double start_rate = 3.46;
inline constexpr double increment = 0.0025;

inline double next_term(double term, double rate) noexcept { return rate * term * (1 - term); }

// Series i's rate and first term.
inline double rate(std::size_t i) { return start_rate + static_cast<double>(i) * increment; }
inline double first_term(std::size_t i) { return static_cast<double>(i) * increment; }

// Series i's last term, computed as the actors do: the same operations in
// the same order, so equal to theirs, not merely close.
inline double final_term(const params& p, std::size_t i) {
  double term = first_term(i);
  for (std::int64_t t = 0; t < p.terms; ++t) term = next_term(term, rate(i));
  return term;
}

// 1 start + 3 series terms + 4 series (tact.cpp tells them apart).
inline std::uint64_t messages(const params& p) {
  const auto s = static_cast<std::uint64_t>(p.series);
  return 1 + 3 * s * static_cast<std::uint64_t>(p.terms) + 4 * s;
}

}  // namespace suite::logistic_map
