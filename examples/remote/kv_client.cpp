// A client of the key-value service, on a node of its own (docs/remote.md,
// "Nodes").
//
//   example-remote-kv-client KEY_FILE ALLOW_LIST LISTEN SERVICE KEY=VALUE... KEY...
//
// Puts each KEY=VALUE into the store that the peer named SERVICE (on the
// allow-list) published as "kv", then asks it for each KEY and prints the
// answers.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include <tact/actor_system.hpp>
#include <tact/ask.hpp>
#include <tact/transactional.hpp>

#include "kv.hpp"

namespace tx = tact::tx;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s KEY_FILE ALLOW_LIST LISTEN SERVICE KEY=VALUE... KEY...\n", argv[0]);
    return 2;
  }
  try {
    tact::actor_system system;
    tact::net::node node{system,
                         {.listen = argv[3],
                          .keys = tact::net::read_key_file(argv[1]),
                          .peers = tact::net::read_allow_list(argv[2])},
                         kv::messages{}};
    // A reference to the service's store, used as a local actor's would be.
    const tx::actor_ref store = node.remote(argv[4], "kv");
    int failures = 0;
    for (int i = 5; i < argc; ++i) {
      const std::string word = argv[i];
      if (const auto eq = word.find('='); eq != std::string::npos) {
        tx::send(store, kv::put{word.substr(0, eq), std::stoll(word.substr(eq + 1))});
        continue;
      }
      // Asked after the puts before it, which it sees: one sender, one
      // receiver, so in order.
      const auto answer = tx::ask<kv::value>(system, store, 10s, kv::get{word});
      try {
        // value() throws without a reply: a timeout, node_down, or what
        // the store threw.
        const kv::value& got = answer.value();
        if (got.v)
          std::printf("%s = %lld\n", word.c_str(), static_cast<long long>(*got.v));
        else
          std::printf("%s is not in the store\n", word.c_str());
      } catch (const std::exception& e) {
        std::printf("%s: %s\n", word.c_str(), e.what());
        ++failures;
      }
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kv client: %s\n", e.what());
    return 1;
  }
}
