#pragma once

// The contended counter's parameters and message count, for both of its
// programs; tx_counter/tact.cpp documents the workload.
#include <cstdint>

#include "suite.hpp"

namespace suite::contended_counter {

struct params {
  std::uint64_t clients;     // at least 1 (8; --quick 8)
  std::uint64_t increments;  // per client, at least 1 (250,000; --quick 10,000)
};

inline params read(options& o) {
  const auto clients = o.param("clients", 8, 8);
  const auto increments = o.param("increments", 250'000, 10'000);
  check(clients >= 1 && increments >= 1, "--clients and --increments must be at least 1");
  return {static_cast<std::uint64_t>(clients), static_cast<std::uint64_t>(increments)};
}

// The count the counter must end with.
inline std::uint64_t total(const params& p) { return p.clients * p.increments; }

// clients x increments client steps + as many increments + the final get
// and its answer.
inline std::uint64_t messages(const params& p) { return 2 * total(p) + 2; }

}  // namespace suite::contended_counter
