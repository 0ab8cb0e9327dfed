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
// tact's links are encrypted and authenticated (ZeroMQ CURVE), CAF's are
// plaintext TCP (caf.cpp): these figures compare tact with encryption
// against CAF without; <workload>_plain, the same program built without
// encryption (tact_nodes.hpp), compares like with like. Each process runs `--threads` workers,
// beside the threads of its network layer (tact-net's link thread; CAF's multiplexer).
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
#include "tact_nodes.hpp"

namespace {

namespace tx = tact::tx;
namespace net = tact::net;

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

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::remote_ping_pong::parameters p = suite::remote_ping_pong::read(o);

  const suite::remote::node_keys keys;
  suite::remote::server_process server = suite::remote::start_server<carried>(
      keys, o.threads(), [](tact::actor_system& system, net::node& node) {
        // Serialized, as a service actor is: its requests in arrival order.
        node.publish("echo", tx::spawn(system, echo(), tx::mode::serialized));
      });
  const std::string server_at = server.contact();

  std::vector<double> round_us;
  round_us.reserve(p.rounds);
  std::uint64_t answered = 0, wrong = 0;
  std::string failure;
  double secs = 0;
  {
    tact::actor_system system{{.workers = o.threads()}};
    {
      net::node node{system, suite::remote::client_config(keys, server_at), carried{}};
      const tx::actor_ref echo_ref = node.remote("server", "echo");
      const std::chrono::seconds deadline{suite::remote::ask_deadline_seconds};
      // One round trip; false, with `failure` set, if it had no answer.
      const auto round = [&](std::uint64_t seq) {
        const auto reply = tx::ask<pong>(system, echo_ref, deadline, ping{seq});
        if (!reply) {
          failure = "round trip " + std::to_string(seq) +
                    " had no reply: " + suite::remote::why_not(reply);
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
