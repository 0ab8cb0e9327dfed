#pragma once

// The byte level of tact's wire format (see tact/net/wire.hpp): varints,
// fixed-width words, and the reader's bookkeeping of what an untrusted
// input may still cost. Installed for the templates of wire.hpp; not for
// users.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <tact/net/wire_error.hpp>

namespace tact::net::detail {

// Appends to a byte vector. Encoding allocates as the vector grows and
// throws only what the vector throws.
class wire_writer {
 public:
  explicit wire_writer(std::vector<std::byte>& out) noexcept : out_{out} {}

  // Unsigned LEB128: 7 bits per byte, low first, the high bit set on every
  // byte but the last. The shortest form only (see wire_reader::varint).
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::byte>(v));
  }
  // Little-endian, `n` bytes of `v`.
  void fixed(std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }

 private:
  std::vector<std::byte>& out_;
};

// Reads one value from bytes that may be hostile. Every read checks the
// bytes left; the first failure is kept (error()) and every later read
// fails at once, so a decoder may read on and test once at the end of a
// record. Nothing here allocates: the codecs charge what they are about
// to allocate with `allocate` first.
class wire_reader {
 public:
  wire_reader(std::span<const std::byte> in, std::uint32_t depth, std::size_t allocation) noexcept
      : at_{in.data()}, end_{in.data() + in.size()}, depth_{depth}, allocation_{allocation} {}

  wire_error error() const noexcept { return error_; }
  bool ok() const noexcept { return error_ == wire_error::none; }
  std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - at_); }
  // Records the first failure only; returns false, for `return fail(...)`.
  bool fail(wire_error e) noexcept {
    if (error_ == wire_error::none) error_ = e;
    at_ = end_;
    return false;
  }

  // The shortest LEB128 form of a 64-bit value: a last byte of 0 after
  // others, or bits past the 64th, are refused (bad_value), so that every
  // value has one encoding and a decoded value encodes back to the same
  // bytes.
  bool varint(std::uint64_t& v) noexcept {
    v = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (at_ == end_) return fail(wire_error::truncated);
      const auto b = static_cast<std::uint8_t>(*at_++);
      if (shift == 63 && b > 1) return fail(wire_error::bad_value);
      v |= std::uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return b != 0 || shift == 0 || fail(wire_error::bad_value);
    }
  }
  bool fixed(std::uint64_t& v, std::size_t n) noexcept {
    if (left() < n) return fail(wire_error::truncated);
    v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(at_[i])} << (8 * i);
    at_ += n;
    return true;
  }
  bool raw(void* data, std::size_t n) noexcept {
    if (left() < n) return fail(wire_error::truncated);
    if (n != 0) std::memcpy(data, at_, n);
    at_ += n;
    return true;
  }

  // The next `n` bytes, in place (valid as long as the input).
  bool view(std::span<const std::byte>& out, std::size_t n) noexcept {
    if (left() < n) return fail(wire_error::truncated);
    out = {at_, n};
    at_ += n;
    return true;
  }

  // A count of elements that each take at least `least` bytes: no more
  // than the bytes left can hold (too_large otherwise, before anything is
  // allocated for them).
  bool count(std::uint64_t& n, std::size_t least) noexcept {
    if (!varint(n)) return false;
    if (least != 0 && n > left() / least) return fail(wire_error::too_large);
    return true;
  }
  // Charges `n` allocations of `each` bytes to the decode's budget.
  bool allocate(std::uint64_t n, std::size_t each = 1) noexcept {
    if (each != 0 && n > allocation_ / each) return fail(wire_error::too_large);
    allocation_ -= static_cast<std::size_t>(n) * each;
    return true;
  }
  // One level deeper (a record, a container); `leave` on the way out.
  bool enter() noexcept {
    if (depth_ == 0) return fail(wire_error::too_deep);
    --depth_;
    return true;
  }
  void leave() noexcept { ++depth_; }

 private:
  const std::byte* at_;
  const std::byte* end_;
  std::uint32_t depth_;
  std::size_t allocation_;
  wire_error error_ = wire_error::none;
};

}  // namespace tact::net::detail
