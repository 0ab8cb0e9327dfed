// A message type declared for the wire once, beside the type: encoded,
// decoded back, and what a decoder says about bytes no encoder writes
// (docs/remote.md, "Messages on the wire").
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <tact/net/wire.hpp>

namespace kv {

struct put {
  std::string key;
  std::int64_t value = 0;
  std::optional<std::string> note;
};
TACT_WIRE(put, "kv.put", key, value, note);

}  // namespace kv

int main() {
  const std::vector<std::byte> bytes = tact::net::encode(kv::put{"a", -5, {}});
  std::printf("%s:", tact::net::wire_shape<kv::put>().c_str());
  for (std::byte b : bytes) std::printf(" %02x", static_cast<unsigned>(b));
  std::printf("\n");

  kv::put back;
  if (tact::net::decode(bytes, back) != tact::net::wire_error::none || back.key != "a" ||
      back.value != -5 || back.note)
    return 1;

  // One byte short: the optional's flag is missing.
  const std::vector<std::byte> cut(bytes.begin(), bytes.end() - 1);
  const tact::net::wire_error e = tact::net::decode(cut, back);
  std::printf("%zu bytes: %s\n", cut.size(), std::string{tact::net::describe(e)}.c_str());
  return e == tact::net::wire_error::truncated ? 0 : 1;
}
