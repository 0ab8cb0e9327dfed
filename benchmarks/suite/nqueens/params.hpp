#pragma once

// The nqueens workload's parameters and what it must end with, for both
// programs that run it (tact.cpp, which documents the protocol, and
// caf.cpp): one definition keeps the engines doing the same search, held
// to the same check.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "board.hpp"
#include "suite.hpp"

namespace suite::nqueens {

struct params {
  std::int64_t n;          // board size, 1..20 (13; --quick 11)
  std::int64_t workers;    // at least 1 (20; --quick 20)
  std::int64_t threshold;  // at least 1 (4; --quick 4)
};

inline params read(options& o) {
  const params p{.n = o.param("n", 13, 11),
                 .workers = o.param("workers", 20, 20),
                 .threshold = o.param("threshold", 4, 4)};
  check(p.n >= 1 && p.n <= ::nqueens::max_size && p.workers >= 1 && p.threshold >= 1,
        "--n must be 1..20, --workers and --threshold at least 1");
  return p;
}

// The solutions of an n-queens board.
inline std::int64_t solutions(const params& p) {
  return ::nqueens::solutions[static_cast<std::size_t>(p.n - 1)];
}

// The work items the master hands out: the valid prefixes of threshold rows.
inline std::int64_t items(const params& p) {
  const int size = static_cast<int>(p.n);
  return ::nqueens::valid_prefixes(::nqueens::board{}, size,
                                   std::min(size, static_cast<int>(p.threshold)));
}

// 1 first item + 2 items + (items + 1) Done + solutions Result + 2 workers
// (tact.cpp tells them apart).
inline std::uint64_t messages(const params& p) {
  const std::int64_t work = items(p);
  return static_cast<std::uint64_t>(1 + 2 * work + (work + 1) + solutions(p) + 2 * p.workers);
}

}  // namespace suite::nqueens
