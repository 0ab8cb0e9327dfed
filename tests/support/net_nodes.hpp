#pragma once

// Nodes for the network tests: free loopback ports, and the configurations
// of two and three nodes that list each other.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <string_view>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tact/net/node.hpp>

#include "support/test_support.hpp"

namespace tact::test {

namespace net = tact::net;

// A free TCP port on 127.0.0.1, for a node whose address its peer must
// know before either starts.
inline std::string free_endpoint() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof a;
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &size) == 0);
  ::close(s);
  return "tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
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

}  // namespace tact::test
