// A key-value service on a node of its own (docs/remote.md, "Nodes").
//
//   example-remote-kv-service KEY_FILE ALLOW_LIST LISTEN
//
// Publishes a store under the name "kv" and serves until SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include <tact/actor_system.hpp>
#include <tact/transactional.hpp>

#include "kv.hpp"

namespace tx = tact::tx;

namespace {

using table = std::map<std::string, std::int64_t>;

// A behaviour is immutable: a put becomes a store of the new table.
tx::behaviour store(std::shared_ptr<const table> t) {
  return {[t](const kv::put& p) {
            auto next = std::make_shared<table>(*t);
            (*next)[p.key] = p.value;
            tx::become(store(std::move(next)));
          },
          [t](const tx::actor_ref& customer, const kv::get& g) {
            const auto at = t->find(g.key);
            tx::send(customer, kv::value{at == t->end() ? std::nullopt : std::optional{at->second}});
          }};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s KEY_FILE ALLOW_LIST LISTEN\n", argv[0]);
    return 2;
  }
  // Blocked before any thread starts, so that every thread inherits the
  // mask and sigwait below is the one to take them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  try {
    tact::actor_system system;
    tact::net::node node{system,
                         {.listen = argv[3],
                          .keys = tact::net::read_key_file(argv[1]),
                          .peers = tact::net::read_allow_list(argv[2])},
                         kv::messages{}};
    // Serialized: one message at a time, in the order each sender sent
    // them, so a get sees the puts its client sent before it.
    node.publish("kv", tx::spawn(system, store(std::make_shared<const table>()), tx::mode::serialized));
    std::printf("kv service at %s\n", node.endpoint().c_str());
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop, &signal);
    const tact::net::node_stats s = node.stats();
    std::printf("served %llu messages\n", static_cast<unsigned long long>(s.received));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kv service: %s\n", e.what());
    return 1;
  }
  return 0;
}
