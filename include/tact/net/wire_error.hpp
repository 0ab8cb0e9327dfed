#pragma once

#include <cstdint>
#include <string_view>


namespace tact::net {

// Why bytes did not decode into a value (tact::net::decode). A decoder
// that fails has read nothing past the fault and allocated no more than
// its budget; the value it wrote into is left valid but unspecified.
enum class wire_error : std::uint8_t {
  none,
  truncated,       // the bytes end inside a value
  too_deep,        // records and containers nested past decode_limits::depth
  too_large,       // a count the bytes left cannot hold, or more allocation than the budget
  bad_value,       // bytes no encoder writes: a bool not 0 or 1, an integer out of its
                   // type's range, a varint longer than needed, map keys out of order
  trailing_bytes,  // the value ended before the bytes did
};

// A short English description, for error messages and logs.
constexpr std::string_view describe(wire_error e) noexcept {
  switch (e) {
    case wire_error::none:
      return "no error";
    case wire_error::truncated:
      return "the bytes end inside a value";
    case wire_error::too_deep:
      return "values nested deeper than the limit";
    case wire_error::too_large:
      return "more elements than the bytes can hold, or more memory than the limit";
    case wire_error::bad_value:
      return "bytes that no encoder writes";
    case wire_error::trailing_bytes:
      return "bytes left after the value";
  }
  return "unknown wire error";
}

}  // namespace tact::net
