#pragma once

// The N-queens computation both nqueens programs run, so that they do
// exactly the same work around their different messaging: Savina's
// boardValid and its sequential kernel, on a fixed-size board that copies
// without allocating.

#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace nqueens {

// NQueensConfig.SOLUTIONS: solutions of the n-queens problem, n = 1..20.
inline constexpr std::array<std::int64_t, 20> solutions = {
    1,    0,     0,     2,      10,      4,        40,       92,        352,        724,
    2680, 14200, 73712, 365596, 2279184, 14772512, 95815104, 666090624, 4968057848, 39029188884};

inline constexpr int max_size = 20;

// A partial placement: queen i stands in column rows[i], for i < depth.
struct board {
  std::array<std::int8_t, max_size> rows{};
  int depth = 0;

  board with(int column) const noexcept {
    board b = *this;
    b.rows[static_cast<std::size_t>(depth)] = static_cast<std::int8_t>(column);
    ++b.depth;
    return b;
  }
};

// NQueensConfig.boardValid: whether no two queens of the first n attack
// each other (Savina checks every pair again at every step).
inline bool valid(const board& b) noexcept {
  for (int i = 0; i < b.depth; ++i) {
    const int p = b.rows[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < b.depth; ++j) {
      const int q = b.rows[static_cast<std::size_t>(j)];
      if (q == p || q == p - (j - i) || q == p + (j - i)) return false;
    }
  }
  return true;
}

// Worker.nqueensKernelSeq: calls found(context) once per complete
// placement that extends b. Opaque to the optimizer (noipa), so that both
// programs run the same machine code for it: inlined with each program's
// own callback, GCC allocated the recursion's registers differently in
// the two, and the same loop ran 25% slower in one of them than in the
// other (docs/performance.md, "Compute-bound workloads"). Its place in
// memory is fixed too: the same code ran 1.2x slower when the linker put
// it where its inner loop straddled a 64-byte line, so it starts on a
// line and its loops start on lines, in both programs.
[[gnu::noipa, gnu::aligned(64)]] inline void solve_kernel(const board& b, int size, void (*found)(void*),
                                        void* context) {
  if (b.depth == size) {
    found(context);
    return;
  }
  for (int column = 0; column < size; ++column) {
    const board next = b.with(column);
    if (valid(next)) solve_kernel(next, size, found, context);
  }
}

// solve_kernel calling found() once per solution.
template <class F>
void solve_sequentially(const board& b, int size, F&& found) {
  solve_kernel(
      b, size, [](void* f) { (*static_cast<std::remove_reference_t<F>*>(f))(); },
      std::addressof(found));
}

// Valid placements of depth 1..up_to (the work items the parallel part of
// the search sends): what the message counts are checked against.
inline std::int64_t valid_prefixes(const board& b, int size, int up_to) {
  if (b.depth == up_to) return 0;
  std::int64_t count = 0;
  for (int column = 0; column < size; ++column) {
    const board next = b.with(column);
    if (valid(next)) count += 1 + valid_prefixes(next, size, up_to);
  }
  return count;
}

}  // namespace nqueens
