#pragma once

// Values on the wire: how a message type is declared once for the network
// layer, and the bounded binary codec that carries it (docs/remote.md,
// "Messages on the wire").
//
//   struct put {
//     std::string key;
//     std::int64_t value = 0;
//   };
//   TACT_WIRE(put, "kv.put", key, value);  // at namespace scope, beside put
//
// A declared record crosses as its members in the order listed, with no
// names and no tags: the stable name and the shape (below) say what the
// bytes are, and both ends check them before any value is decoded. Members
// may be bool, integers, enums, float, double, std::string,
// std::vector<std::byte> (raw bytes: a protobuf, say), std::vector,
// std::array, std::optional, std::pair, std::map of these, and other
// declared records, a record nested in itself included (a tree).
//
// Decoding trusts nothing: every length is checked against the bytes left
// before anything is allocated for it, nesting is limited, the memory a
// decoded value takes is limited, and bytes that no encoder writes (a
// varint longer than needed, a bool of 2, a value out of its type's range,
// map keys out of order) are refused. So a value has exactly one encoding:
// whatever decodes encodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tact/defaults.hpp>
#include <tact/net/detail/wire_codec.hpp>
#include <tact/net/wire_error.hpp>

namespace tact::net {

// A type the codec carries: the kinds listed above, and declared records.
template <class T>
concept wire_type = detail::has_codec<T>;

// A type declared with TACT_WIRE.
template <class T>
concept wire_record = detail::declared_record<T>;

// What decode accepts at most.
struct decode_limits {
  // Records and containers nested in each other, counting the value itself.
  std::uint32_t depth = defaults::wire_depth;
  // Bytes of memory the decoded value's strings, vectors and maps may take
  // (estimated from their element sizes), however many the input claims.
  std::size_t allocation = defaults::wire_allocation;
};

// Appends the encoding of `value` to `out`. Throws what growing `out`
// throws. Any thread.
template <wire_type T>
void encode(const T& value, std::vector<std::byte>& out) {
  detail::wire_writer w{out};
  detail::codec<T>::encode(w, value);
}

template <wire_type T>
std::vector<std::byte> encode(const T& value) {
  std::vector<std::byte> out;
  encode(value, out);
  return out;
}

// Decodes `in`, which must hold exactly one value of T, into `out`.
// Returns wire_error::none, or what was wrong; `out` is then valid but
// unspecified. Never throws: running out of memory within the limits is
// too_large. Any thread.
template <wire_type T>
wire_error decode(std::span<const std::byte> in, T& out, const decode_limits& limits = {}) noexcept {
  detail::wire_reader r{in, limits.depth, limits.allocation};
  try {
    detail::codec<T>::decode(r, out);
  } catch (const std::bad_alloc&) {
    r.fail(wire_error::too_large);
  }
  if (r.ok() && r.left() != 0) r.fail(wire_error::trailing_bytes);
  return r.error();
}

// A record's stable name, as declared.
template <wire_record T>
constexpr std::string_view wire_name() noexcept {
  return detail::codec<T>::info.name;
}

// What the bytes of a T are, as text: a record's name and its members'
// shapes, recursively ("kv.put{s,i64}"; a record nested in itself appears
// by name). Two programs agree on a type's encoding exactly when they
// agree on its shape. Computed once per type. Any thread.
template <wire_type T>
const std::string& wire_shape() {
  static const std::string shape = [] {
    std::string s;
    detail::codec<T>::shape(s);
    return s;
  }();
  return shape;
}

// A 64-bit hash of wire_shape (FNV-1a), for handshakes.
template <wire_type T>
std::uint64_t wire_fingerprint() {
  static const std::uint64_t hash = [] {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : wire_shape<T>()) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ull;
    }
    return h;
  }();
  return hash;
}

}  // namespace tact::net

// Declares TYPE for the wire: its stable NAME (a string literal, the same
// in every program that exchanges it) and its members, in wire order. At
// namespace scope, in TYPE's namespace. TYPE must be default-constructible
// (decoding fills one in); members not listed do not cross.
#define TACT_WIRE(TYPE, NAME, ...)                                                         \
  [[maybe_unused]] constexpr auto tact_wire_record(const TYPE*) noexcept {                 \
    return ::tact::net::detail::make_record<TYPE>(NAME TACT_WIRE_MEMBERS_(TYPE, __VA_ARGS__)); \
  }                                                                                        \
  static_assert(true, "a semicolon after TACT_WIRE(...)")

// `, &TYPE::a, &TYPE::b, ...` for TACT_WIRE's member list (up to 256).
#define TACT_WIRE_MEMBERS_(TYPE, ...) \
  __VA_OPT__(TACT_WIRE_EXPAND_(TACT_WIRE_MEMBER_(TYPE, __VA_ARGS__)))
#define TACT_WIRE_MEMBER_(TYPE, FIRST, ...) \
  , &TYPE::FIRST __VA_OPT__(TACT_WIRE_MEMBER_AGAIN_ TACT_WIRE_PARENS_(TYPE, __VA_ARGS__))
#define TACT_WIRE_MEMBER_AGAIN_() TACT_WIRE_MEMBER_
#define TACT_WIRE_PARENS_ ()
#define TACT_WIRE_EXPAND_(...) TACT_WIRE_EXPAND4_(TACT_WIRE_EXPAND4_(TACT_WIRE_EXPAND4_(TACT_WIRE_EXPAND4_(__VA_ARGS__))))
#define TACT_WIRE_EXPAND4_(...) TACT_WIRE_EXPAND3_(TACT_WIRE_EXPAND3_(TACT_WIRE_EXPAND3_(TACT_WIRE_EXPAND3_(__VA_ARGS__))))
#define TACT_WIRE_EXPAND3_(...) TACT_WIRE_EXPAND2_(TACT_WIRE_EXPAND2_(TACT_WIRE_EXPAND2_(TACT_WIRE_EXPAND2_(__VA_ARGS__))))
#define TACT_WIRE_EXPAND2_(...) TACT_WIRE_EXPAND1_(TACT_WIRE_EXPAND1_(TACT_WIRE_EXPAND1_(TACT_WIRE_EXPAND1_(__VA_ARGS__))))
#define TACT_WIRE_EXPAND1_(...) __VA_ARGS__
