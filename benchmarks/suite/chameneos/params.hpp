#pragma once

// The chameneos workload's parameters and message count, for both programs
// that run it (tact.cpp, which documents the protocol, and caf.cpp).
#include <cstdint>

#include "suite.hpp"

namespace suite::chameneos {

struct params {
  std::int64_t chameneos;  // at least 2 (4,000; --quick 100)
  std::int64_t meetings;   // not negative (800,000; --quick 20,000)
};

inline params read(options& o) {
  const params p{.chameneos = o.param("chameneos", 4'000, 100),
                 .meetings = o.param("meetings", 800'000, 20'000)};
  check(p.chameneos >= 2 && p.meetings >= 0,
        "--chameneos must be at least 2, --meetings not negative");
  return p;
}

// 4 meetings + 3 chameneos (tact.cpp tells them apart).
inline std::uint64_t messages(const params& p) {
  return static_cast<std::uint64_t>(4 * p.meetings + 3 * p.chameneos);
}

}  // namespace suite::chameneos
