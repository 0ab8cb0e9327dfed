#pragma once

// The transfers every bank_transaction program makes (bank_transaction on
// classic actors and on CAF, tx_bank_transaction on transactional actors),
// its parameters and what it must end with: drawing them from one
// definition keeps the engines doing exactly the same work, held to the
// same check.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "savina.hpp"
#include "suite.hpp"

namespace suite::bank {

struct params {
  std::int64_t accounts;      // at least 10 (16,000; --quick 1,000)
  std::int64_t transactions;  // at least 1 (500,000; --quick 20,000)
};

inline params read(options& o) {
  const params p{.accounts = o.param("accounts", 16'000, 1'000),
                 .transactions = o.param("transactions", 500'000, 20'000)};
  check(p.accounts >= 10 && p.accounts <= 1'000'000 && p.transactions >= 1,
        "--accounts must be between 10 and 1,000,000, --transactions at least 1");
  return p;
}

// The seed of the teller's draws (Savina's).
inline constexpr std::int64_t seed = 123456;

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

// Every account's final balance, in cents: independent of the interleaving,
// so main replays the teller's draws.
inline std::vector<std::int64_t> expected_balances(const params& p) {
  std::vector<std::int64_t> expected(static_cast<std::size_t>(p.accounts));
  suite::savina::pseudo_random replay{seed};
  for (std::int64_t m = 0; m < p.transactions; ++m) {
    const transfer t = draw(replay, static_cast<std::int32_t>(p.accounts));
    expected[static_cast<std::size_t>(t.source)] -= t.cents;
    expected[static_cast<std::size_t>(t.destination)] += t.cents;
  }
  return expected;
}

// 1 start + transactions Credit + transactions Debit
// + 2 transactions acknowledgements + accounts Stop.
inline std::uint64_t messages(const params& p) {
  return 1 + 4 * static_cast<std::uint64_t>(p.transactions) +
         static_cast<std::uint64_t>(p.accounts);
}

}  // namespace suite::bank
