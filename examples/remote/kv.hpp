// The messages of the key-value service, declared once for the wire and
// included by both programs (docs/remote.md, "Nodes").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tact/net/node.hpp>
#include <tact/net/wire.hpp>

namespace kv {

struct put {
  std::string key;
  std::int64_t value = 0;
};
TACT_WIRE(put, "kv.put", key, value);

struct get {
  std::string key;
};
TACT_WIRE(get, "kv.get", key);

struct value {
  std::optional<std::int64_t> v;  // empty: nothing was put under the key
};
TACT_WIRE(value, "kv.value", v);

// What both nodes carry: the same list on each side.
using messages = tact::net::message_types<put, get, value>;

}  // namespace kv
