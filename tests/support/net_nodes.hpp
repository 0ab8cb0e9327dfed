#pragma once

// Nodes for the network tests: free loopback ports, the configurations of
// two and three nodes that list each other, and a key-value protocol for
// the nodes' actors.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tact/net/node.hpp>

#include "support/test_support.hpp"

namespace tact::test {

namespace net = tact::net;
namespace tx = tact::tx;

// A free TCP port on 127.0.0.1, for a node whose address its peer must
// know before either starts. Not one the kernel hands out (port 0): the
// port stays free only until the node binds it, and meanwhile any
// connection opened on the machine (the other tests' nodes run beside
// this one) may take it as its own end, from the same ephemeral range
// (a clean-clone run failed so once: "Address already in use"). So a
// port below that range, drawn at random and bound once to see that it
// is free: only a listener that draws the same one can take it.
inline std::string free_endpoint() {
  int ephemeral_low = 32768;  // Linux's default, if the file cannot be read
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    int low = 0;
    int high = 0;
    if (std::fscanf(f, "%d %d", &low, &high) == 2 && low > 11000) ephemeral_low = low;
    std::fclose(f);
  }
  static std::mt19937 draw{std::random_device{}()};
  std::uniform_int_distribution<int> port{10000, ephemeral_low - 1};
  // Bounded: a machine whose every port of the range is taken fails the
  // test instead of hanging it.
  for (int tries = 0; tries < 1000; ++tries) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(s >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port(draw)));
    const bool free = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    if (free) return "tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  FAIL("no free port below the ephemeral range in 1000 draws");
  return {};
}

// Two nodes' configurations, each listing the other: "alpha" and "beta".
struct pair_config {
  net::key_pair alpha_keys = net::generate_key_pair();
  net::key_pair beta_keys = net::generate_key_pair();
  std::string alpha_at = free_endpoint();
  std::string beta_at = free_endpoint();

  net::node_config alpha() const {
    return {
        .listen = alpha_at, .keys = alpha_keys, .peers = {{"beta", beta_keys.public_key, beta_at}}};
  }
  net::node_config beta() const {
    return {.listen = beta_at,
            .keys = beta_keys,
            .peers = {{"alpha", alpha_keys.public_key, alpha_at}}};
  }
};

inline tact::system_config two_workers() { return {.workers = 2}; }

// Three nodes, each listing the other two with their addresses.
struct trio_config {
  static constexpr std::array<const char*, 3> names{"alpha", "beta", "gamma"};
  std::array<net::key_pair, 3> keys{net::generate_key_pair(), net::generate_key_pair(),
                                    net::generate_key_pair()};
  std::array<std::string, 3> at{free_endpoint(), free_endpoint(), free_endpoint()};

  net::node_config of(std::size_t i) const {
    net::node_config c{.listen = at[i], .keys = keys[i], .peers = {}};
    for (std::size_t j = 0; j < names.size(); ++j)
      if (j != i) c.peers.push_back({names[j], keys[j].public_key, at[j]});
    return c;
  }
};

inline void wait_connected(const net::node& n, std::string_view peer) {
  const bool up = eventually([&] { return n.connected(peer); });
  const net::node_stats s = n.stats();
  INFO("lost " << s.peers_lost << ", sent " << s.sent << ", received " << s.received
               << ", malformed " << s.malformed << ", refused clients " << s.refused_clients);
  REQUIRE(up);
}

// A key-value protocol: put a value, get it back.
namespace kv {

struct get {
  std::string key;
};
TACT_WIRE(get, "test.get", key);

struct put {
  std::string key;
  std::int64_t value = 0;
};
TACT_WIRE(put, "test.put", key, value);

struct value {
  std::int64_t v = 0;
};
TACT_WIRE(value, "test.value", v);

// A store of one value: answers get with the value put last (`held` at
// first).
inline tx::behaviour store(std::int64_t held) {
  return {[](const put& p) { tx::become(store(p.value)); },
          [held](const tx::actor_ref& customer, const get&) { tx::send(customer, value{held}); }};
}

// Keeps every customer it is sent and answers none: an ask on it ends
// only by its deadline or by the loss of the node.
inline tx::behaviour holding(std::vector<tx::actor_ref> customers) {
  return {[customers](const tx::actor_ref& customer, const get&) {
    auto more = customers;
    more.push_back(customer);
    tx::become(holding(std::move(more)));
  }};
}

}  // namespace kv

}  // namespace tact::test
