#pragma once

// The function both trapezoid programs integrate, and the work of one
// piece: one definition for both engines.
#include <cmath>
#include <cstdint>

namespace suite::trapezoid {

inline constexpr double left_end = 1;
inline constexpr double right_end = 5;

// TrapezoidalConfig.fx.
inline double fx(double x) {
  const double a = std::sin(std::pow(x, 3) - 1);
  const double b = x + 1;
  const double c = a / b;
  const double d = std::sqrt(1 + std::exp(std::sqrt(2 * x)));
  return c * d;
}

// Worker.process: the area of [l, r] in pieces of width h. Opaque to the
// optimizer and on a 64-byte line, so that both programs run the same
// machine code at the same alignment (see nqueens/board.hpp).
[[gnu::noipa, gnu::aligned(64)]] inline double area(double l, double r, double h) {
  const auto n = static_cast<std::int64_t>((r - l) / h);
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double lx = static_cast<double>(i) * h + l;
    const double rx = lx + h;
    sum += 0.5 * (fx(lx) + fx(rx)) * h;
  }
  return sum;
}

}  // namespace suite::trapezoid
