#pragma once

// A node's identity and whom it talks to (docs/remote.md, "Keys and
// allow-lists"): a Curve25519 key pair, kept in a private file, and an
// allow-list of peers by public key. Part of tact-net
// (dependency('tact-net')).
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tact/export.hpp>

namespace tact::net {

// A Curve25519 key pair in Z85 text (40 characters each), as ZeroMQ's
// CURVE mechanism takes it.
struct key_pair {
  std::string public_key;
  std::string secret_key;
};

// What a key file or an allow-list could not be read for: the file, the
// line (0: the file as a whole) and what was wrong.
class key_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fresh key pair from the system's random source. Any thread.
TACT_API key_pair generate_key_pair();

// The public key of a Z85 secret key; throws key_error if `secret_key` is
// not one.
TACT_API std::string public_key_of(std::string_view secret_key);

// Whether `key` is a Z85 key: 40 characters of the Z85 alphabet.
TACT_API bool is_key(std::string_view key) noexcept;

// Writes `keys` to a new file at `path`, readable and writable by its
// owner only (mode 0600, set as it is created, so the secret key is never
// readable by others). Refuses to replace an existing file: throws
// key_error, and the file is left as it was.
TACT_API void write_key_file(const std::filesystem::path& path, const key_pair& keys);

// Reads a key file written by write_key_file (or tact-keygen). Throws
// key_error if the file cannot be read, is malformed, its public key does
// not match its secret key, or anyone but its owner may read or write it
// (as ssh refuses a private key others can read).
TACT_API key_pair read_key_file(const std::filesystem::path& path);

// A peer a node accepts connections from and may connect to.
struct peer {
  std::string name;        // how the node names it (letters, digits, '.', '-', '_')
  std::string public_key;  // Z85
  std::string address;     // where it listens ("tcp://host:port"), or empty: it connects to us
};

// The peers of an allow-list, one per line:
//
//   # name        public key (Z85, 40 characters)           address (optional)
//   db1           bG6VFt^T(BMH5?Wt7hD3S5w2i>$KKCxZ}J5H0vT]   tcp://10.0.0.5:48896
//   client-7      4)zYtR@#cU*oiT<*sWvXirabVwH9&}kc{aGO3%?k
//
// A line whose first character (after blanks) is '#' is a comment; '#'
// elsewhere is part of a key, whose alphabet has it. Names and keys are
// unique. Throws key_error,
// naming the file and line, for anything else.
TACT_API std::vector<peer> read_allow_list(const std::filesystem::path& path);
TACT_API std::vector<peer> parse_allow_list(std::string_view text, std::string_view source = "allow-list");

}  // namespace tact::net
