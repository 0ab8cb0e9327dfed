#pragma once

// The frames nodes exchange over a link (docs/remote.md, "Frames"), in
// tact's own wire format: a byte for the kind of frame, then one record.
// Header-only, so that the wire fuzzer decodes frames as nodes do.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <tact/net/wire.hpp>

namespace tact::net::detail {

// Both ends of a connection speak the same version, or part.
inline constexpr std::uint16_t protocol_version = 1;

// A message type a node receives: its stable name and the fingerprint of
// its shape (tact::net::wire_fingerprint).
struct type_entry {
  std::string name;
  std::uint64_t fingerprint = 0;
};
TACT_WIRE(type_entry, "tact.type", name, fingerprint);

// The first frame each way on a connection.
struct hello {
  std::uint16_t version = protocol_version;
  // Drawn at random each time a node starts: a peer that restarted is a
  // new node, and what referred to the old one reports it down.
  std::uint64_t incarnation = 0;
  // Where the sender listens, empty if it does not.
  std::string listen;
  // Every message type the sender sends and receives; its envelopes name
  // their type by its index here, so the receiver maps them to its own
  // types once, at the hello, by name and fingerprint.
  std::vector<type_entry> types;
};
TACT_WIRE(hello, "tact.hello", version, incarnation, listen, types);

// One message for one actor.
struct envelope {
  std::uint64_t target = 0;  // the receiver's id for the actor
  std::uint32_t type = 0;    // an index into the sender's hello::types
  // The customer (a tx message's first element) as the sender exported it
  // to the receiver, which sends replies to this id; 0: none.
  std::uint64_t sender = 0;
  std::vector<std::byte> payload;  // the message, in its type's encoding
};
TACT_WIRE(envelope, "tact.envelope", target, type, sender, payload);

// Small messages travel together: encryption costs about a microsecond
// per frame, whatever its size up to a few kilobytes.
struct batch {
  std::vector<envelope> envelopes;
};
TACT_WIRE(batch, "tact.batch", envelopes);

// Actors the sender no longer refers to: ids the receiver gave them
// (envelope::sender) when it sent them over, one per reference sent. The
// receiver lets go of each.
struct release {
  std::vector<std::uint64_t> ids;
};
TACT_WIRE(release, "tact.release", ids);

// Asks the receiver to say (down) when the name with this id is not
// published any more, or at once if it is not published now. `tag` names
// the monitor on the sender's side.
struct watch {
  std::uint64_t tag = 0;
  std::uint64_t target = 0;
};
TACT_WIRE(watch, "tact.watch", tag, target);

// The monitor `tag` is not wanted any more.
struct unwatch {
  std::uint64_t tag = 0;
};
TACT_WIRE(unwatch, "tact.unwatch", tag);

// The name the monitor `tag` watched is not published any more.
struct down {
  std::uint64_t tag = 0;
};
TACT_WIRE(down, "tact.down", tag);

// A request that will have no reply (a classic ask answered elsewhere:
// docs/remote.md, "Classic actors"): the asked behaviour threw (`failed`,
// with its exception's text), or the request was dropped unanswered.
struct outcome {
  std::uint64_t target = 0;  // the asker's id for its answer
  bool failed = false;
  std::string what;
};
TACT_WIRE(outcome, "tact.outcome", target, failed, what);

enum class frame_kind : std::uint8_t {
  hello = 1,
  batch = 2,
  release = 3,
  watch = 4,
  unwatch = 5,
  down = 6,
  outcome = 7
};

using frame = std::variant<hello, batch, release, watch, unwatch, down, outcome>;

// The kind byte of each record of a frame.
template <class R>
constexpr frame_kind kind_of() noexcept {
  if constexpr (std::is_same_v<R, hello>) return frame_kind::hello;
  if constexpr (std::is_same_v<R, batch>) return frame_kind::batch;
  if constexpr (std::is_same_v<R, release>) return frame_kind::release;
  if constexpr (std::is_same_v<R, watch>) return frame_kind::watch;
  if constexpr (std::is_same_v<R, unwatch>) return frame_kind::unwatch;
  if constexpr (std::is_same_v<R, down>) return frame_kind::down;
  if constexpr (std::is_same_v<R, outcome>) return frame_kind::outcome;
}

inline std::vector<std::byte> encode_frame(const frame& f) {
  std::vector<std::byte> out;
  std::visit(
      [&](const auto& record) {
        out.push_back(static_cast<std::byte>(kind_of<std::remove_cvref_t<decltype(record)>>()));
        encode(record, out);
      },
      f);
  return out;
}

// Reads one frame: an unknown kind is bad_value, and the record is
// decoded under `limits` (see tact::net::decode).
inline wire_error decode_frame(std::span<const std::byte> in, frame& out,
                               const decode_limits& limits = {}) {
  if (in.empty()) return wire_error::truncated;
  const auto rest = in.subspan(1);
  switch (static_cast<frame_kind>(in[0])) {
    case frame_kind::hello:
      return decode(rest, out.emplace<hello>(), limits);
    case frame_kind::batch:
      return decode(rest, out.emplace<batch>(), limits);
    case frame_kind::release:
      return decode(rest, out.emplace<release>(), limits);
    case frame_kind::watch:
      return decode(rest, out.emplace<watch>(), limits);
    case frame_kind::unwatch:
      return decode(rest, out.emplace<unwatch>(), limits);
    case frame_kind::down:
      return decode(rest, out.emplace<down>(), limits);
    case frame_kind::outcome:
      return decode(rest, out.emplace<outcome>(), limits);
  }
  return wire_error::bad_value;
}

// Why a peer cannot be sent a type this node would send it.
struct type_mismatch {
  enum class reason : std::uint8_t { unknown, other_shape };
  std::string name;
  reason why;
};

// The types of `ours` (what this node would send) that the peer, by its
// hello::types, does not receive, or receives under another shape: a
// message of those is refused at send, with its name, instead of being
// decoded into garbage.
inline std::vector<type_mismatch> mismatches(const std::vector<type_entry>& ours,
                                             const std::vector<type_entry>& theirs) {
  std::vector<type_mismatch> out;
  for (const type_entry& t : ours) {
    const type_entry* found = nullptr;
    for (const type_entry& u : theirs)
      if (u.name == t.name) found = &u;
    if (found == nullptr)
      out.push_back({t.name, type_mismatch::reason::unknown});
    else if (found->fingerprint != t.fingerprint)
      out.push_back({t.name, type_mismatch::reason::other_shape});
  }
  return out;
}

// The entry of T for a hello.
template <wire_record T>
type_entry entry_of() {
  return {std::string{wire_name<T>()}, wire_fingerprint<T>()};
}

}  // namespace tact::net::detail
