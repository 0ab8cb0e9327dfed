#pragma once

// The latency workload's parameters and message counts, for both of its
// programs; latency/tact.cpp documents the protocol.
#include <chrono>
#include <cstdint>

#include "suite.hpp"

namespace suite::latency {

struct parameters {
  std::uint64_t messages;               // flood messages, at least 1
  std::uint64_t burst;                  // flood messages per run of the flooder's behaviour
  std::chrono::microseconds interval;   // from one ping's send to the next's, at least
  std::uint64_t min_pings;              // pings at least, however soon the flood is over
};

// messages 10,000,000 (--quick 500,000); burst 1,000; interval_us 1,000;
// min_pings 20.
inline parameters read(options& o) {
  const auto messages = o.param("messages", 10'000'000, 500'000);
  const auto burst = o.param("burst", 1'000, 1'000);
  const auto interval = o.param("interval_us", 1'000, 1'000);
  const auto min_pings = o.param("min_pings", 20, 20);
  check(messages >= 1, "--messages must be at least 1");
  check(burst >= 1, "--burst must be at least 1");
  check(interval >= 0, "--interval_us must not be negative");
  check(min_pings >= 1, "--min_pings must be at least 1");
  return {static_cast<std::uint64_t>(messages), static_cast<std::uint64_t>(burst),
          std::chrono::microseconds{interval}, static_cast<std::uint64_t>(min_pings)};
}

// Runs of the flooder's behaviour: the start message, then one message to
// itself per further burst.
inline std::uint64_t bursts(const parameters& p) { return (p.messages + p.burst - 1) / p.burst; }

// Every message the actors receive: the flooder's, the flood, and per ping
// the ping and its reply.
inline std::uint64_t messages(const parameters& p, std::uint64_t pings) {
  return bursts(p) + p.messages + 2 * pings;
}

}  // namespace suite::latency
