#pragma once

// What several Savina workloads share, whichever engine runs them: Savina's
// own pseudo-random generator, so that every engine (and the JVM reference)
// draws the same numbers, and its dummy per-message computation.
//
// Savina: Imam & Sarkar, "Savina - An Actor Benchmark Suite", AGERE 2014;
// reference code github.com/shamsimam/savina.

#include <cmath>
#include <cstdint>

namespace suite::savina {

// edu.rice.habanero.benchmarks.PseudoRandom: a 16-bit linear congruential
// generator (values 0..65535), used by Savina instead of java.util.Random
// so that ports to other languages draw the same sequence.
class pseudo_random {
 public:
  explicit pseudo_random(std::int64_t seed = 74755) noexcept : value_{seed} {}

  std::int64_t next_long() noexcept {
    value_ = (value_ * 1309 + 13849) & 65535;
    return value_;
  }
  std::int32_t next_int() noexcept { return static_cast<std::int32_t>(next_long()); }
  // Savina's nextInt(exclusive_max): a modulo, bias and all.
  std::int32_t next_int(std::int32_t exclusive_max) noexcept { return next_int() % exclusive_max; }
  double next_double() noexcept { return 1.0 / static_cast<double>(next_long() + 1); }

 private:
  std::int64_t value_;
};

// The angle Savina's fork-join workloads pass to performComputation (37.2).
// Volatile: read at run time, so the compiler cannot fold sin(37.2) into a
// constant and leave the actors nothing to compute.
inline volatile double theta = 37.2;

// Savina's performComputation: sin(theta) squared. Savina throws when the
// result is not positive (to defeat dead-code elimination); here the caller
// checks it, so the value is used either way.
inline double perform_computation(double angle) noexcept {
  const double s = std::sin(angle);
  return s * s;
}

}  // namespace suite::savina
