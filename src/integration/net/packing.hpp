#pragma once

// How a link packs frames into one ZeroMQ message, and reads them back:
// each frame after its length, a varint (docs/remote.md, "Links between
// nodes"). Header-only, so that the wire fuzzer reads messages as links do.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <tact/net/detail/wire_io.hpp>

namespace tact::net::detail {

// Room for a frame's length before it (a varint of 64 bits, at most).
inline constexpr std::size_t length_room = 10;

// Appends `frame` to the message being packed in `out`.
inline void pack_frame(std::vector<std::byte>& out, std::span<const std::byte> frame) {
  wire_writer w{out};
  w.varint(frame.size());
  w.raw(frame.data(), frame.size());
}

// Calls on_frame(frame) for each frame of `message`, in order, with the
// bytes in place. Lengths are checked against the bytes left: a message
// that is not whole frames stops at its first broken one, and false is
// returned.
template <class OnFrame>
bool unpack_frames(std::span<const std::byte> message, OnFrame&& on_frame) {
  wire_reader in{message, 0, 0};
  while (in.left() != 0) {
    std::uint64_t length = 0;
    std::span<const std::byte> frame;
    if (!in.count(length, 1) || !in.view(frame, static_cast<std::size_t>(length))) return false;
    on_frame(frame);
  }
  return true;
}

}  // namespace tact::net::detail
