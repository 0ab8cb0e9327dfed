#pragma once

// What every Google Benchmark fixture of the suite shares: a loud failure
// when a result is wrong, and time per message as a counter.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tact::bench {

inline void fail_unless(bool ok, const char* what) {
  if (!ok) throw std::runtime_error{std::string{"benchmark result is wrong: "} + what};
}

inline void report_per_message(benchmark::State& state, std::uint64_t messages_per_iteration) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * messages_per_iteration));
  // Seconds per message, printed with an SI prefix (e.g. 12.3n).
  state.counters["per_msg"] = benchmark::Counter(
      static_cast<double>(messages_per_iteration),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace tact::bench
