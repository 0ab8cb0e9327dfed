#pragma once

// The transfers both bank_transaction programs make: drawing them from one
// definition keeps the two engines doing exactly the same work.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "savina.hpp"

namespace suite::bank {

struct transfer {
  std::int32_t source;
  std::int32_t destination;
  std::int64_t cents;
};

inline transfer draw(suite::savina::pseudo_random& random, std::int32_t accounts) {
  const std::int32_t source = random.next_int(accounts / 10 * 8);
  std::int32_t step = random.next_int(accounts - source);
  if (step == 0) step = 1;
  const auto cents = std::llround(std::abs(random.next_double()) * 1000 * 100);
  return {source, source + step, cents};
}

}  // namespace suite::bank
