#pragma once

// The trapezoid workload's parameters, for both programs that run it
// (tact.cpp, which documents it, and caf.cpp); integrand.hpp holds what they
// compute.
#include <cstdint>

#include "suite.hpp"

namespace suite::trapezoid {

struct params {
  std::int64_t pieces;   // at least 1 (10,000,000; --quick 1,500,000)
  std::int64_t workers;  // at least 1 (100; --quick 100)
};

inline params read(options& o) {
  const params p{.pieces = o.param("pieces", 10'000'000, 1'500'000),
                 .workers = o.param("workers", 100, 100)};
  check(p.pieces >= 1 && p.workers >= 1, "--pieces and --workers must be at least 1");
  return p;
}

}  // namespace suite::trapezoid
