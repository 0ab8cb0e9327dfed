// The wire codec as a program using it sees it: declared records and the
// standard kinds come back as they went, every value has one encoding, and
// bytes that no encoder writes are refused with the reason, within the
// limits, before anything large is allocated.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/net/wire.hpp>
#include <tact/transactional.hpp>

#include "support/wire_types.hpp"

namespace {

using tact::net::decode;
using tact::net::decode_limits;
using tact::net::encode;
using tact::net::wire_error;
using namespace wire_sample;

std::vector<std::byte> bytes(std::initializer_list<int> list) {
  std::vector<std::byte> out;
  for (int b : list) out.push_back(static_cast<std::byte>(b));
  return out;
}

template <class T>
T round_trip(const T& value) {
  const std::vector<std::byte> wire = encode(value);
  T back{};
  REQUIRE(decode(wire, back) == wire_error::none);
  CHECK(encode(back) == wire);  // one encoding per value
  return back;
}

template <class T>
wire_error decoding(const std::vector<std::byte>& wire, const decode_limits& limits = {}) {
  T value{};
  return decode(wire, value, limits);
}

tree chain(int depth) {
  tree t{static_cast<std::uint32_t>(depth), {}, std::nullopt};
  for (int d = depth - 1; d >= 0; --d) t = tree{static_cast<std::uint32_t>(d), {t}, std::nullopt};
  return t;
}

// `put` with its members renamed: the same shape.
struct put_twin {
  std::string name;
  std::int64_t amount = 0;
};
TACT_WIRE(put_twin, "sample.put", name, amount);

}  // namespace

TEST_CASE("a declared record comes back member for member, in a few bytes") {
  const put p = round_trip(put{"key", -5});
  CHECK(p.key == "key");
  CHECK(p.value == -5);
  // Length 3, "key", zigzag(-5) = 9.
  CHECK(encode(put{"key", -5}) == bytes({3, 'k', 'e', 'y', 9}));
  CHECK(tact::net::wire_name<put>() == "sample.put");
}

TEST_CASE("every scalar comes back bit for bit, at its extremes") {
  scalars s{true,
            255,
            65535,
            std::numeric_limits<std::uint32_t>::max(),
            std::numeric_limits<std::uint64_t>::max(),
            std::numeric_limits<std::int8_t>::min(),
            std::numeric_limits<std::int16_t>::min(),
            std::numeric_limits<std::int32_t>::min(),
            std::numeric_limits<std::int64_t>::min(),
            -0.0f,
            std::numeric_limits<double>::quiet_NaN(),
            colour::blue};
  const scalars back = round_trip(s);
  CHECK(back.flag);
  CHECK(back.u64 == s.u64);
  CHECK(back.i8 == s.i8);
  CHECK(back.i64 == s.i64);
  CHECK(std::signbit(back.f32));
  CHECK(std::isnan(back.f64));
  CHECK(back.c == colour::blue);
  s.i64 = std::numeric_limits<std::int64_t>::max();
  CHECK(round_trip(s).i64 == s.i64);
}

TEST_CASE("containers, optional members and a record nested in itself come back whole") {
  containers c;
  c.blob = {std::byte{0}, std::byte{0xff}, std::byte{0}};
  c.index["a"] = {put{"x", 1}, put{"y", 2}};
  c.index["b"] = {};
  c.slots = {std::optional<std::int32_t>{7}, std::nullopt, std::optional<std::int32_t>{-7}};
  c.points = {{1, 0.5}, {2, -1e300}};
  c.nothings.resize(4);
  c.bits = {true, false, true};
  c.extra = scalars{};
  c.extra->u16 = 300;
  const containers back = round_trip(c);
  CHECK(back.blob == c.blob);
  CHECK(back.index.size() == 2);
  CHECK(back.index.at("a")[1].key == "y");
  CHECK(back.slots[0] == 7);
  CHECK_FALSE(back.slots[1].has_value());
  CHECK(back.points[1].second == -1e300);
  CHECK(back.nothings.size() == 4);
  CHECK(back.bits == c.bits);
  REQUIRE(back.extra.has_value());
  CHECK(back.extra->u16 == 300);

  const tree t{
      1, {tree{2, {}, "leaf"}, tree{3, {tree{4, {}, std::nullopt}}, std::nullopt}}, "root"};
  const tree tb = round_trip(t);
  CHECK(tb.label == "root");
  CHECK(tb.children[1].children[0].id == 4);
}

TEST_CASE("decoding replaces what the value held before") {
  containers old;
  old.blob = {std::byte{9}};
  old.index["stale"] = {put{"z", 0}};
  old.nothings.resize(2);
  old.extra = scalars{};
  const std::vector<std::byte> wire = encode(containers{});
  REQUIRE(decode(wire, old) == wire_error::none);
  CHECK(old.blob.empty());
  CHECK(old.index.empty());
  CHECK(old.nothings.empty());
  CHECK_FALSE(old.extra.has_value());
}

TEST_CASE("every proper prefix of an encoding is refused") {
  containers c;
  c.index["a"] = {put{"x", 1}};
  c.points = {{1, 0.5}};
  c.extra = scalars{};
  const std::vector<std::byte> wire = encode(c);
  for (std::size_t n = 0; n < wire.size(); ++n) {
    CAPTURE(n);
    const wire_error e =
        decoding<containers>({wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(n)});
    CHECK((e == wire_error::truncated || e == wire_error::too_large));
  }
  std::vector<std::byte> longer = wire;
  longer.push_back(std::byte{0});
  CHECK(decoding<containers>(longer) == wire_error::trailing_bytes);
}

TEST_CASE("bytes that no encoder writes are bad values") {
  // A bool of 2; an optional's flag of 2.
  CHECK(decoding<bool>(bytes({2})) == wire_error::bad_value);
  CHECK(decoding<std::optional<int>>(bytes({2, 0})) == wire_error::bad_value);
  // 0 written in two bytes, 1 in three: longer than needed.
  CHECK(decoding<std::uint32_t>(bytes({0x80, 0x00})) == wire_error::bad_value);
  CHECK(decoding<std::uint32_t>(bytes({0x81, 0x80, 0x00})) == wire_error::bad_value);
  // Bits past the 64th.
  CHECK(decoding<std::uint64_t>(bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0x02})) == wire_error::bad_value);
  CHECK(decoding<std::uint64_t>(bytes(
            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})) == wire_error::none);
  // Out of the type's range: 256 into a u8, 128 and -129 into an i8.
  CHECK(decoding<std::uint8_t>(bytes({0x80, 0x02})) == wire_error::bad_value);
  CHECK(decoding<std::int8_t>(encode(std::int16_t{128})) == wire_error::bad_value);
  CHECK(decoding<std::int8_t>(encode(std::int16_t{-129})) == wire_error::bad_value);
  CHECK(decoding<std::int8_t>(encode(std::int16_t{-128})) == wire_error::none);
  // Map keys repeated, or out of order.
  CHECK(decoding<std::map<std::uint8_t, bool>>(bytes({2, 5, 1, 5, 0})) == wire_error::bad_value);
  CHECK(decoding<std::map<std::uint8_t, bool>>(bytes({2, 6, 1, 5, 0})) == wire_error::bad_value);
  CHECK(decoding<std::map<std::uint8_t, bool>>(bytes({2, 5, 1, 6, 0})) == wire_error::none);
}

TEST_CASE("a count the bytes cannot hold is refused before anything is allocated") {
  // 2^40 strings claimed in six bytes.
  std::vector<std::byte> huge = encode(std::uint64_t{1} << 40);
  huge.push_back(std::byte{0});
  CHECK(decoding<std::vector<std::string>>(huge) == wire_error::too_large);
  CHECK(decoding<std::string>(huge) == wire_error::too_large);
  // Elements that take no bytes at all are bounded by the memory budget:
  // a trillion of them, claimed in six bytes.
  const std::vector<std::byte> empties = encode(std::uint64_t{1'000'000'000'000});
  CHECK(decoding<std::vector<nothing>>(empties, {.allocation = 1 << 16}) == wire_error::too_large);
}

TEST_CASE("the memory a decoded value takes stays within its budget") {
  const std::vector<std::byte> wire = encode(std::vector<std::string>(10, std::string(100, 'x')));
  CHECK(decoding<std::vector<std::string>>(wire, {.allocation = 2'000}) == wire_error::none);
  CHECK(decoding<std::vector<std::string>>(wire, {.allocation = 1'000}) == wire_error::too_large);
}

TEST_CASE("values nested deeper than the limit are refused") {
  const std::vector<std::byte> wire = encode(chain(40));
  // Each level is a record and a vector: 81 levels in all.
  CHECK(decoding<tree>(wire) == wire_error::too_deep);
  CHECK(decoding<tree>(wire, {.depth = 81}) == wire_error::none);
  CHECK(decoding<tree>(wire, {.depth = 80}) == wire_error::too_deep);
}

TEST_CASE("a shape names every member's kind, and tells versions of a record apart") {
  CHECK(tact::net::wire_shape<put>() == "sample.put{s,i64}");
  CHECK(tact::net::wire_shape<tree>() == "sample.tree{u32,v<sample.tree>,o<s>}");
  CHECK(tact::net::wire_shape<std::map<std::string, std::vector<nothing>>>() ==
        "m<s,v<sample.nothing{}>>");
  CHECK(tact::net::wire_shape<scalars>() ==
        "sample.scalars{b,u8,u16,u32,u64,i8,i16,i32,i64,f32,f64,e(u8)}");
  // Another member type: another shape. Renamed members: the same bytes.
  CHECK(tact::net::wire_fingerprint<put_v2>() != tact::net::wire_fingerprint<put>());
  CHECK(tact::net::wire_fingerprint<put_twin>() == tact::net::wire_fingerprint<put>());
  put_twin twin;
  REQUIRE(decode(encode(put{"k", 7}), twin) == wire_error::none);
  CHECK(twin.name == "k");
  CHECK(twin.amount == 7);
}

TEST_CASE("every wire error has a description") {
  for (wire_error e : {wire_error::none, wire_error::truncated, wire_error::too_deep,
                       wire_error::too_large, wire_error::bad_value, wire_error::trailing_bytes})
    CHECK(tact::net::describe(e) != "unknown wire error");
}

namespace kv {
struct put {
  std::string key;
  std::int64_t value = 0;
  std::optional<std::string> note;
};
TACT_WIRE(put, "kv.put", key, value, note);
}  // namespace kv

TEST_CASE("the example of docs/remote.md encodes as it says") {
  CHECK(tact::net::wire_shape<kv::put>() == "kv.put{s,i64,o<s>}");
  CHECK(encode(kv::put{"a", -5, {}}) == bytes({0x01, 0x61, 0x09, 0x00}));
  // 300 as a varint: 0xac 0x02; and never truncated into a u8.
  CHECK(encode(std::uint32_t{300}) == bytes({0xac, 0x02}));
  CHECK(decoding<std::uint8_t>(bytes({0xac, 0x02})) == wire_error::bad_value);
}

namespace {

struct introduction {
  std::string name;
  tact::tx::actor_ref who;
};
TACT_WIRE(introduction, "sample.introduction", name, who);

}  // namespace

// An actor reference crosses only inside a node's message, where the node
// turns it into an id and back into a proxy (node_test.cpp); the codec
// alone carries only an empty one.
TEST_CASE("an actor reference is an id only a node can make or read") {
  CHECK(tact::net::wire_shape<introduction>() == "sample.introduction{s,r}");
  const introduction none{"x", {}};
  CHECK(round_trip(none).who == tact::tx::actor_ref{});
  CHECK(encode(none) == bytes({1, 'x', 0}));

  tact::actor_system system;
  const introduction someone{"x", tact::tx::spawn(system, {[](int) {}})};
  CHECK_THROWS_AS(encode(someone), std::invalid_argument);
  CHECK(decoding<introduction>(bytes({1, 'x', 5})) == wire_error::bad_value);
}
