#include "program.hpp"

#include <array>
#include <string_view>

#include <tact/defaults.hpp>

namespace tact_fuzz {
namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(opcode::count)> names{
    "spawn_classic", "spawn_tx",      "note",         "relay",       "boom",
    "tx_add",        "tx_boom",       "tx_pass",      "ask_classic", "ask_tx",
    "timer_classic", "timer_tx",      "cancel",       "advance",     "run_some",
    "run_all",       "finish",        "kill",         "tx_release",  "tx_to_nobody",
    "tx_unmatched",  "stop"};

// A run is a few hundred steps at most: PCT's change points fall inside it.
constexpr std::uint64_t pct_steps = 300;

}  // namespace

program decode(const std::uint8_t* data, std::size_t size) {
  const auto byte = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
  program p;
  const std::uint8_t flags = byte(0);
  p.how.kind = (flags & 1) != 0 ? tact::testing::schedule::policy::pct
                                : tact::testing::schedule::policy::random;
  p.how.depth = 1 + ((flags >> 1) & 3);
  p.how.steps = pct_steps;
  static constexpr std::uint32_t queue_counts[] = {256, 4, 2, 1};
  p.queues = queue_counts[(flags >> 3) & 3];
  p.local_batch = (flags & 0x20) != 0 ? tact::defaults::local_batch : 0;
  std::uint64_t seed = 0;
  for (std::size_t i = 0; i < 4; ++i) seed |= std::uint64_t{byte(1 + i)} << (8 * i);
  p.how.seed = seed;
  for (std::size_t at = header_bytes; at < size && p.operations.size() < max_operations;
       at += operation_bytes) {
    const auto code = static_cast<opcode>(byte(at) % static_cast<std::uint8_t>(opcode::count));
    if (code == opcode::stop) break;
    p.operations.push_back({code, byte(at + 1), byte(at + 2), byte(at + 3)});
  }
  return p;
}

std::string describe(const operation& op) {
  return std::string{names[static_cast<std::size_t>(op.code)]} + "(a=" + std::to_string(op.a) +
         ", b=" + std::to_string(op.b) + ", c=" + std::to_string(op.c) + ")";
}

}  // namespace tact_fuzz
