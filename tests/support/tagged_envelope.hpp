#pragma once

#include <cstdint>

#include <tact/detail/envelope.hpp>

namespace tact::test {

// An envelope whose target word encodes (producer, sequence number), for
// tests that check per-producer order through the mailbox layer.
inline constexpr int sequence_bits = 40;

inline detail::envelope tagged(std::uint64_t producer, std::uint64_t seq) {
  return detail::envelope{reinterpret_cast<void*>((producer << sequence_bits) | seq), nullptr,
                          nullptr};
}
inline std::uint64_t producer_of(const detail::envelope& e) {
  return reinterpret_cast<std::uintptr_t>(e.target) >> sequence_bits;
}
inline std::uint64_t seq_of(const detail::envelope& e) {
  return reinterpret_cast<std::uintptr_t>(e.target) & ((std::uint64_t{1} << sequence_bits) - 1);
}

}  // namespace tact::test
