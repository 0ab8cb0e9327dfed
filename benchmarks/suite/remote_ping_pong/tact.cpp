// remote_ping_pong: the round trip to an actor in another process, over
// loopback. Not a Savina workload.
//
// The program forks: the child is the server node, which publishes an echo
// actor; the parent is the client node, whose main thread asks the echo
// actor (request and reply) one request at a time, `rounds` times after
// `warmup` untimed ones. A round trip crosses loopback twice: the
// client's proxy encodes the request and hands it to its link, the server
// node decodes it and sends it to the echo actor, whose reply goes back
// the same way to the ask's one-shot customer.
//
// tact's links are always encrypted and authenticated (ZeroMQ CURVE), CAF's
// are plaintext TCP (caf.cpp): these figures compare tact with encryption
// against CAF without. Each process runs `--threads` workers, beside the
// threads of its network layer (tact-net's link thread; CAF's multiplexer).
//
// Parameters (full / --quick):
//   --rounds  timed round trips (20,000 / 2,000)
//   --warmup  untimed round trips before them: the connections, both ways,
//             and the first-use costs are paid there (200 / 50)
//
// Reported: ns_per_msg is the time per round trip (the timed rounds'
// total over their number), then pings (the timed rounds) and the round
// trips' own times: p50_us, p99_us, max_us. Checked: every ask answered,
// with its own sequence number. The peak memory the runner measures is the
// larger of the two processes' (the client reaps the server).
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <tact/net/node.hpp>
#include <tact/transactional.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

namespace tx = tact::tx;
namespace net = tact::net;

// Built twice: with CURVE (the default), and as <workload>_plain without
// (-DREMOTE_PLAINTEXT=1, node_config::insecure_plaintext), to show what
// encryption costs; CAF's links are plaintext either way.
#ifndef REMOTE_PLAINTEXT
#define REMOTE_PLAINTEXT 0
#endif
constexpr bool plaintext = REMOTE_PLAINTEXT != 0;
using clock_type = std::chrono::steady_clock;

struct ping {
  std::uint64_t seq = 0;
};
TACT_WIRE(ping, "bench.ping", seq);

struct pong {
  std::uint64_t seq = 0;
};
TACT_WIRE(pong, "bench.pong", seq);

using carried = net::message_types<ping, pong>;

tx::behaviour echo() {
  return {[](const tx::actor_ref& customer, const ping& p) { tx::send(customer, pong{p.seq}); }};
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

// The server process's body: its node listens on a port of its own choice,
// which it passes to the client with its readiness.
int serve(const suite::remote::server_process::side& side, unsigned threads,
          const net::key_pair& keys, const net::peer& client) {
  tact::actor_system system{{.workers = threads}};
  {
    net::node node{system,
                   {.listen = "tcp://127.0.0.1:0",
                    .keys = keys,
                    .peers = {client},
                    .insecure_plaintext = plaintext},
                   carried{}};
    // Serialized, as a service actor is: its requests in arrival order.
    node.publish("echo", tx::spawn(system, echo(), tx::mode::serialized));
    side.ready(node.endpoint());
    side.wait_for_stop();
  }
  system.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::remote_ping_pong::parameters p = suite::remote_ping_pong::read(o);

  // Made before the fork, so that each node knows the other's key, and the
  // server the client's address (a node replies over a connection it
  // opens itself).
  const net::key_pair server_keys = net::generate_key_pair();
  const net::key_pair client_keys = net::generate_key_pair();
  const std::string client_at =
      "tcp://127.0.0.1:" + std::to_string(suite::remote::free_loopback_port());
  suite::remote::server_process server{[&](const suite::remote::server_process::side& side) {
    return serve(side, o.threads(), server_keys, {"client", client_keys.public_key, client_at});
  }};
  const std::string server_at = server.contact();

  std::vector<double> round_us;
  round_us.reserve(p.rounds);
  std::uint64_t answered = 0, wrong = 0;
  std::string failure;
  double secs = 0;
  {
    tact::actor_system system{{.workers = o.threads()}};
    {
      net::node node{system,
                     {.listen = client_at,
                      .keys = client_keys,
                      .peers = {{"server", server_keys.public_key, server_at}},
                      .insecure_plaintext = plaintext},
                     carried{}};
      const tx::actor_ref echo_ref = node.remote("server", "echo");
      const std::chrono::seconds deadline{suite::remote::ask_deadline_seconds};
      // One round trip; false, with `failure` set, if it had no answer.
      const auto round = [&](std::uint64_t seq) {
        const auto reply = tx::ask<pong>(system, echo_ref, deadline, ping{seq});
        if (!reply) {
          failure = "round trip " + std::to_string(seq) + " had no reply: " + why_not(reply);
          return false;
        }
        wrong += reply->seq != seq;
        return true;
      };
      bool ok = true;
      for (std::uint64_t i = 0; ok && i < p.warmup; ++i) ok = round(i);
      const auto start = clock_type::now();
      for (std::uint64_t i = 0; ok && i < p.rounds; ++i) {
        const auto sent = clock_type::now();
        ok = round(p.warmup + i);
        answered += ok;
        round_us.push_back(
            std::chrono::duration<double, std::micro>(clock_type::now() - sent).count());
      }
      secs = std::chrono::duration<double>(clock_type::now() - start).count();
    }
    system.stop();
  }
  server.stop();

  suite::check(failure.empty(), failure);
  suite::check(answered == p.rounds && wrong == 0,
               std::to_string(answered) + " of " + std::to_string(p.rounds) +
                   " round trips answered, " + std::to_string(wrong) + " with another's number");
  suite::report(o, suite::bench_name("remote_ping_pong"), "tact", secs, p.rounds,
                suite::latency_fields(round_us));
}
