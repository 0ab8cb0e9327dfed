// tact-keygen: makes a node's key pair.
//
//   tact-keygen NAME [DIRECTORY]
//
// Writes DIRECTORY/NAME.key (default: the current directory), readable by
// its owner only, and prints the line that other nodes add to their
// allow-lists for this one (append " tcp://HOST:PORT" if it listens).
// Never replaces an existing key file.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <tact/net/keys.hpp>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: tact-keygen NAME [DIRECTORY]\n");
    return 2;
  }
  const std::string name = argv[1];
  const std::filesystem::path file = std::filesystem::path{argc == 3 ? argv[2] : "."} / (name + ".key");
  try {
    // The name must be one an allow-list accepts.
    const tact::net::key_pair keys = tact::net::generate_key_pair();
    tact::net::parse_allow_list(name + " " + keys.public_key, "NAME");
    tact::net::write_key_file(file, keys);
    std::printf("%s %s\n", name.c_str(), keys.public_key.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tact-keygen: %s\n", e.what());
    return 1;
  }
  return 0;
}
