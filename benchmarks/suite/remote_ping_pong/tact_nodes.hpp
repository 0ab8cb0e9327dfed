#pragma once

// The tact side of both remote workloads (remote_throughput includes this
// file): the server node in a child process, the client node's
// configuration, and why an ask had no answer.
//
// Built twice: with CURVE (the default), and as <workload>_plain without
// (-DREMOTE_PLAINTEXT=1, node_config::insecure_plaintext), to show what
// encryption costs; CAF's links are plaintext either way.
#include <exception>
#include <string>

#include <tact/net/node.hpp>
#include <tact/transactional.hpp>

#include "params.hpp"

#ifndef REMOTE_PLAINTEXT
#define REMOTE_PLAINTEXT 0
#endif

namespace suite::remote {

inline constexpr bool plaintext = REMOTE_PLAINTEXT != 0;

// Both nodes' keys, made before the fork so that each knows the other's.
struct node_keys {
  tact::net::key_pair server = tact::net::generate_key_pair();
  tact::net::key_pair client = tact::net::generate_key_pair();
};

// Forks the server: a node on its own system of `threads` workers, on a
// port of its own choice, that publishes what publish(system, node) does,
// and serves until stopped. It lists the client by key alone: the
// client's hello says where to answer.
template <class Carried, class Publish>
server_process start_server(const node_keys& keys, unsigned threads, Publish&& publish) {
  return server_process{[&](const server_process::side& side) {
    tact::actor_system system{{.workers = threads}};
    {
      tact::net::node node{system,
                           {.listen = "tcp://127.0.0.1:0",
                            .keys = keys.server,
                            .peers = {{"client", keys.client.public_key, ""}},
                            .insecure_plaintext = plaintext},
                           Carried{}};
      publish(system, node);
      side.ready(node.endpoint());
      side.wait_for_stop();
    }
    system.stop();
    return 0;
  }};
}

// The client node, which reaches the server at `server_at`.
inline tact::net::node_config client_config(const node_keys& keys, const std::string& server_at) {
  return {.listen = "tcp://127.0.0.1:0",
          .keys = keys.client,
          .peers = {{"server", keys.server.public_key, server_at}},
          .insecure_plaintext = plaintext};
}

// Why an ask has no reply, in the words of the exception its value()
// throws: the asked actor's own, or tact::ask_failed's.
template <class T>
std::string why_not(const tact::ask_result<T>& reply) {
  try {
    static_cast<void>(reply.value());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "it has one";
}

}  // namespace suite::remote
