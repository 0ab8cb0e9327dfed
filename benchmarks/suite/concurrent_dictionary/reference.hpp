#pragma once

// The writes both concurrent_dictionary programs must have seen: one
// definition of the request stream for both engines.
#include <cstdint>

#include "savina.hpp"

namespace suite::dictionary {

inline std::int64_t expected_writes(std::int64_t workers, std::int64_t requests,
                                    std::int64_t write_percent) {
  std::int64_t writes = 0;
  for (std::int64_t id = 0; id < workers; ++id) {
    suite::savina::pseudo_random random{id + requests + write_percent};
    for (std::int64_t i = 0; i < requests; ++i) {
      const bool write = random.next_int(100) < write_percent;
      random.next_int();
      if (write) {
        random.next_int();
        ++writes;
      }
    }
  }
  return writes;
}

}  // namespace suite::dictionary
