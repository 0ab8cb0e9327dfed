#pragma once

// The remote_throughput workload's parameters and its one message, for
// both of its programs; remote_throughput/tact.cpp documents the protocol.
// The server process and the loopback port come from remote_ping_pong.
#include <cstdint>

#include "../remote_ping_pong/params.hpp"
#include "suite.hpp"

namespace suite::remote_throughput {

struct parameters {
  std::uint64_t messages;  // timed one-way messages, at least 1
};

// messages 1,000,000 (--quick 200,000).
inline parameters read(options& o) {
  const auto messages = o.param("messages", 1'000'000, 200'000);
  check(messages >= 1, "--messages must be at least 1");
  return {static_cast<std::uint64_t>(messages)};
}

// The second member of message `seq`: a value the server adds up, so that
// a message whose content arrived damaged shows in the sum.
inline std::int32_t payload(std::uint64_t seq) {
  return static_cast<std::int32_t>(seq % 1'000) - 500;
}

// The sum of payload(1..n).
inline std::int64_t payload_sum(std::uint64_t n) {
  std::int64_t sum = 0;
  for (std::uint64_t seq = 1; seq <= n; ++seq) sum += payload(seq);
  return sum;
}

// What the server's counter has seen, as it answers the final ask.
struct tally {
  std::uint64_t received = 0;
  std::uint64_t last_seq = 0;  // the sequence number of the last message (0: none yet)
  // Messages whose sequence number was not the one after the last's (the
  // first must be 1), and the first of them: its place and its number.
  std::uint64_t out_of_order = 0;
  std::uint64_t first_wrong_at = 0;
  std::uint64_t first_wrong_seq = 0;
  std::int64_t payload_sum = 0;
};

// The counter's next tally, after message (seq, value).
inline tally counted(tally t, std::uint64_t seq, std::int32_t value) {
  ++t.received;
  if (seq != t.last_seq + 1 && t.out_of_order++ == 0) {
    t.first_wrong_at = t.received;
    t.first_wrong_seq = seq;
  }
  t.last_seq = seq;
  t.payload_sum += value;
  return t;
}

// Fails the run unless `t` is exactly messages 1..n, in order.
inline void check_tally(const tally& t, std::uint64_t n) {
  check(t.received == n, "the server counted " + std::to_string(t.received) + " of " +
                             std::to_string(n) + " messages");
  check(t.out_of_order == 0, std::to_string(t.out_of_order) +
                                 " messages arrived out of order, the first as message " +
                                 std::to_string(t.first_wrong_at) + " with sequence number " +
                                 std::to_string(t.first_wrong_seq));
  check(t.payload_sum == payload_sum(n), "the payloads add up to " + std::to_string(t.payload_sum) +
                                             ", not " + std::to_string(payload_sum(n)));
}

}  // namespace suite::remote_throughput
