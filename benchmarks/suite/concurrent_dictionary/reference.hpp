#pragma once

// What both concurrent_dictionary programs share: their parameters, the
// initial map and the writes they must have seen, so that the engines do
// the same work from one definition of the request stream, held to the same
// check; tact.cpp documents the workload.
#include <cstdint>
#include <unordered_map>

#include "savina.hpp"
#include "suite.hpp"

namespace suite::dictionary {

// DictionaryConfig.DATA_LIMIT: the initial map's size, and the key range.
inline constexpr std::int32_t data_limit = 2'147'483'647 / 4'096;

using data_map = std::unordered_map<std::int32_t, std::int32_t>;

struct params {
  std::int64_t workers;        // at least 1 (100; --quick 20)
  std::int64_t requests;       // per worker, not negative (20,000; --quick 1,000)
  std::int64_t write_percent;  // 0..100 (10; --quick 10)
};

inline params read(options& o) {
  const params p{.workers = o.param("workers", 100, 20),
                 .requests = o.param("requests", 20'000, 1'000),
                 .write_percent = o.param("write_percent", 10, 10)};
  check(p.workers >= 1 && p.requests >= 0 && p.write_percent >= 0 && p.write_percent <= 100,
        "--workers must be at least 1, --requests not negative, --write_percent 0..100");
  return p;
}

// Savina's initial map: every key below data_limit, k -> k.
inline data_map initial_data() {
  data_map initial;
  initial.reserve(data_limit);
  for (std::int32_t k = 0; k < data_limit; ++k) initial.emplace(k, k);
  return initial;
}

// Writes the workers request in all: each worker's draws are fixed by its
// seed, whatever the interleaving, so main can replay them.
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

// workers DoWork + 2 workers requests + workers Done + 1 EndWork.
inline std::uint64_t messages(const params& p) {
  const auto e = static_cast<std::uint64_t>(p.workers);
  return 2 * e * static_cast<std::uint64_t>(p.requests) + 2 * e + 1;
}

}  // namespace suite::dictionary
