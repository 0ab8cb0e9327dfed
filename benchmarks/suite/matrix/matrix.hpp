#pragma once

// The matrices of the matrix workload and the work of one row, shared by
// tact.cpp and caf.cpp so that both engines run the same arithmetic:
// Z = X * Y, all n x n, row by row.
//
// The entries are small whole numbers, so every sum is exact in a double
// and the result can be checked exactly without a second multiplication
// (Freivalds): for a fixed vector v, each row of Z v must equal the same
// row of X (Y v). A row left out, computed twice or computed wrongly shows.

#include <cstdint>
#include <string>
#include <vector>

#include "suite.hpp"

namespace suite::matrix {

class product {
 public:
  // Refuses sizes whose sums would not be exact (or that take hours).
  explicit product(std::uint32_t n) : n_{n}, x_(cells(n)), y_(cells(n)), z_(cells(n), 0.0) {
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t k = 0; k < n; ++k) {
        x_[index(i, k)] = static_cast<double>((7u * i + 3u * k) % 10u);
        y_[index(i, k)] = static_cast<double>((5u * i + 11u * k) % 10u);
      }
  }

  std::uint32_t size() const noexcept { return n_; }

  // Row `i` of Z: each row by one caller only, and any rows at once.
  // Opaque to the optimizer and on a 64-byte line, so that both programs
  // run the same machine code at the same alignment (see nqueens/board.hpp).
  [[gnu::noipa, gnu::aligned(64)]] void multiply_row(std::uint32_t i) noexcept {
    double* const z = &z_[index(i, 0)];
    const double* const x = &x_[index(i, 0)];
    for (std::uint32_t k = 0; k < n_; ++k) {
      const double xk = x[k];
      const double* const y = &y_[index(k, 0)];
      for (std::uint32_t j = 0; j < n_; ++j) z[j] += xk * y[j];
    }
  }

  // Once every row is done: fails the run unless every row of Z is right.
  void check() const {
    std::vector<double> v(n_), yv(n_, 0.0);
    for (std::uint32_t j = 0; j < n_; ++j) v[j] = static_cast<double>(j % 7 + 1);
    for (std::uint32_t k = 0; k < n_; ++k)
      for (std::uint32_t j = 0; j < n_; ++j) yv[k] += y_[index(k, j)] * v[j];
    std::uint32_t wrong = 0;
    for (std::uint32_t i = 0; i < n_; ++i) {
      double zv = 0.0, xyv = 0.0;
      for (std::uint32_t j = 0; j < n_; ++j) {
        zv += z_[index(i, j)] * v[j];
        xyv += x_[index(i, j)] * yv[j];
      }
      if (zv != xyv) ++wrong;
    }
    suite::check(wrong == 0, std::to_string(wrong) + " of " + std::to_string(n_) +
                                 " rows of the product are wrong");
  }

 private:
  static std::size_t cells(std::uint32_t n) {
    // Entries below 10: a sum of n products stays below 81 n * 7 * n in the
    // check, exact in a double's 53 bits for n up to 20,000.
    suite::check(n >= 1 && n <= 20'000, "size must be between 1 and 20,000");
    return std::size_t{n} * n;
  }
  std::size_t index(std::uint32_t row, std::uint32_t column) const noexcept {
    return std::size_t{row} * n_ + column;
  }

  std::uint32_t n_;
  std::vector<double> x_, y_, z_;
};

}  // namespace suite::matrix
