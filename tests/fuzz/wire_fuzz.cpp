#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include <tact/net/wire.hpp>

#include "integration/net/packing.hpp"
#include "integration/net/protocol.hpp"
#include "support/wire_types.hpp"

// The wire decoder on untrusted bytes (see docs/fuzzing.md): the first byte
// picks a type, a frame as nodes exchange them, or a message of packed
// frames as links exchange them, and the rest is decoded as one value of
// it under tight limits.
// Whatever decodes must encode back to exactly the same bytes (the format
// has one encoding per value); whatever does not must fail cleanly, within
// the limits (the fuzzer's -malloc_limit_mb catches a single allocation
// past them, AddressSanitizer any overrun).
namespace {

constexpr tact::net::decode_limits limits{.depth = 32, .allocation = 1 << 20};

template <class T>
void round_trip(std::span<const std::byte> in) {
  T value{};
  if (tact::net::decode(in, value, limits) != tact::net::wire_error::none) return;
  const std::vector<std::byte> again = tact::net::encode(value);
  if (again.size() != in.size() || !std::equal(again.begin(), again.end(), in.begin())) {
    std::fprintf(stderr, "wire_fuzz: %s decoded, and encoded back to other bytes\n",
                 tact::net::wire_shape<T>().c_str());
    std::abort();
  }
}

void frame_round_trip(std::span<const std::byte> in) {
  tact::net::detail::frame f;
  if (tact::net::detail::decode_frame(in, f, limits) != tact::net::wire_error::none) return;
  const std::vector<std::byte> again = tact::net::detail::encode_frame(f);
  if (again.size() != in.size() || !std::equal(again.begin(), again.end(), in.begin())) {
    std::fprintf(stderr, "wire_fuzz: a frame decoded, and encoded back to other bytes\n");
    std::abort();
  }
}

// A ZeroMQ message as a link reads it: frames after their lengths, each
// then decoded as a frame. What reads whole packs back to the same bytes.
void packed_round_trip(std::span<const std::byte> in) {
  std::vector<std::byte> again;
  const bool whole = tact::net::detail::unpack_frames(in, [&](std::span<const std::byte> frame) {
    frame_round_trip(frame);
    tact::net::detail::pack_frame(again, frame);
  });
  if (whole && (again.size() != in.size() || !std::equal(again.begin(), again.end(), in.begin()))) {
    std::fprintf(stderr,
                 "wire_fuzz: a packed message read whole, and packed back to other bytes\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> in{reinterpret_cast<const std::byte*>(data) + 1, size - 1};
  switch (data[0] % 8) {
    case 0:
      round_trip<wire_sample::put>(in);
      break;
    case 1:
      round_trip<wire_sample::scalars>(in);
      break;
    case 2:
      round_trip<wire_sample::tree>(in);
      break;
    case 3:
      round_trip<wire_sample::containers>(in);
      break;
    case 4:
      round_trip<std::vector<wire_sample::nothing>>(in);
      break;
    case 5:
      round_trip<std::map<std::int16_t, std::string>>(in);
      break;
    case 6:
      frame_round_trip(in);
      break;
    case 7:
      packed_round_trip(in);
      break;
  }
  return 0;
}
