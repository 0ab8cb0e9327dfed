// The frames nodes exchange: they come back as they went, a kind nobody
// sends is refused, and a handshake names the types a peer cannot take.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <tact/net/wire.hpp>

#include "integration/net/protocol.hpp"
#include "support/wire_types.hpp"

namespace {

using namespace tact::net::detail;
using tact::net::wire_error;

}  // namespace

TEST_CASE("a hello and a batch come back as they went") {
  const hello h{protocol_version, 0x1234'5678'9abc'def0, "tcp://127.0.0.1:48896",
                {entry_of<wire_sample::put>(), entry_of<wire_sample::tree>()}};
  frame f;
  REQUIRE(decode_frame(encode_frame(h), f) == wire_error::none);
  REQUIRE(std::holds_alternative<hello>(f));
  const hello& back = std::get<hello>(f);
  CHECK(back.incarnation == h.incarnation);
  CHECK(back.listen == h.listen);
  REQUIRE(back.types.size() == 2);
  CHECK(back.types[1].name == "sample.tree");
  CHECK(back.types[1].fingerprint == tact::net::wire_fingerprint<wire_sample::tree>());

  batch b;
  for (std::uint64_t i = 0; i < 3; ++i)
    b.envelopes.push_back({i + 1, 0, 7, tact::net::encode(wire_sample::put{"k", static_cast<std::int64_t>(i)})});
  REQUIRE(decode_frame(encode_frame(b), f) == wire_error::none);
  REQUIRE(std::holds_alternative<batch>(f));
  const batch& bb = std::get<batch>(f);
  REQUIRE(bb.envelopes.size() == 3);
  wire_sample::put p;
  REQUIRE(tact::net::decode(bb.envelopes[2].payload, p) == wire_error::none);
  CHECK(p.value == 2);
  CHECK(bb.envelopes[2].target == 3);
  CHECK(bb.envelopes[2].sender == 7);
}

TEST_CASE("a frame of a kind nobody sends, or of nothing, is refused") {
  frame f;
  CHECK(decode_frame({}, f) == wire_error::truncated);
  std::vector<std::byte> odd = encode_frame(batch{});
  odd[0] = std::byte{9};
  CHECK(decode_frame(odd, f) == wire_error::bad_value);
  // A batch claiming a billion envelopes in a few bytes.
  std::vector<std::byte> claim{static_cast<std::byte>(frame_kind::batch)};
  tact::net::encode(std::uint64_t{1'000'000'000}, claim);
  CHECK(decode_frame(claim, f) == wire_error::too_large);
}

TEST_CASE("a handshake names the types a peer does not take, or takes under another shape") {
  const std::vector<type_entry> ours{entry_of<wire_sample::put>(), entry_of<wire_sample::tree>(),
                                     entry_of<wire_sample::scalars>()};
  const std::vector<type_entry> theirs{entry_of<wire_sample::put_v2>(), entry_of<wire_sample::scalars>()};
  const std::vector<type_mismatch> found = mismatches(ours, theirs);
  REQUIRE(found.size() == 2);
  CHECK(found[0].name == "sample.put");
  CHECK(found[0].why == type_mismatch::reason::other_shape);
  CHECK(found[1].name == "sample.tree");
  CHECK(found[1].why == type_mismatch::reason::unknown);
  CHECK(mismatches(theirs, theirs).empty());
}
