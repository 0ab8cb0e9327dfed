#pragma once

// Wire types that between them use every kind the codec carries, for the
// wire fuzzer and the wire tests.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tact/net/wire.hpp>

namespace wire_sample {

enum class colour : std::uint8_t { red, green, blue };

struct put {
  std::string key;
  std::int64_t value = 0;
};
TACT_WIRE(put, "sample.put", key, value);

// `put` under the same name with another shape: what a program built
// against an older version might still send.
struct put_v2 {
  std::string key;
  std::int32_t value = 0;
};
TACT_WIRE(put_v2, "sample.put", key, value);

// Every scalar kind, at every width.
struct scalars {
  bool flag = false;
  std::uint8_t u8 = 0;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  std::int8_t i8 = 0;
  std::int16_t i16 = 0;
  std::int32_t i32 = 0;
  std::int64_t i64 = 0;
  float f32 = 0;
  double f64 = 0;
  colour c = colour::red;
};
TACT_WIRE(scalars, "sample.scalars", flag, u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, c);

// A record nested in itself.
struct tree {
  std::uint32_t id = 0;
  std::vector<tree> children;
  std::optional<std::string> label;
};
TACT_WIRE(tree, "sample.tree", id, children, label);

struct nothing {};
TACT_WIRE(nothing, "sample.nothing");

// Containers of every kind, nested.
struct containers {
  std::vector<std::byte> blob;
  std::map<std::string, std::vector<put>> index;
  std::array<std::optional<std::int32_t>, 3> slots;
  std::vector<std::pair<std::uint16_t, double>> points;
  std::vector<nothing> nothings;
  std::vector<bool> bits;
  std::optional<scalars> extra;
};
TACT_WIRE(containers, "sample.containers", blob, index, slots, points, nothings, bits, extra);

}  // namespace wire_sample
