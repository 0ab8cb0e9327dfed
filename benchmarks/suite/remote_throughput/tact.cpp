// remote_throughput: one-way messages to an actor in another process, over
// loopback, as fast as the client can send them. Not a Savina workload.
//
// The program forks: the child is the server node, which publishes a
// counting actor; the parent is the client node, whose main thread sends
// it `messages` small messages (a sequence number, 1 to messages, and a
// 32-bit payload) without waiting, then asks it for its tally. Messages
// from one sender to one actor arrive in the order sent, so the reply
// comes after the counter has seen all of them, and the ask's return ends
// the timed region. Before it, one untimed ask opens the connections both
// ways.
//
// The counter keeps its tally in its behaviour and becomes the next tally
// on every message (a serialized actor, as a service is: one message at a
// time, in arrival order), so it checks the order as the messages come:
// each sequence number must be the last one plus one.
//
// tact's links are encrypted and authenticated (ZeroMQ CURVE), CAF's are
// plaintext TCP (caf.cpp): these figures compare tact with encryption
// against CAF without; <workload>_plain, the same program built without
// encryption (tact_nodes.hpp), compares like with like. Each process runs `--threads` workers,
// beside the threads of its network layer (tact-net's link thread; CAF's multiplexer). Nothing
// holds the sender back but the node's bound on bytes queued for a peer (node_config::max_queued,
// 64 MiB by default): a send past it fails, and the tally shows it.
//
// Parameters (full / --quick):
//   --messages  timed one-way messages (1,000,000 / 200,000)
//
// Reported: ns_per_msg, the timed region over the messages. Checked: the
// server counted exactly `messages`, with consecutive sequence numbers,
// and their payloads add up.
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include <tact/net/node.hpp>
#include <tact/transactional.hpp>

#include "../remote_ping_pong/tact_nodes.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace suite::remote_throughput {
TACT_WIRE(tally, "bench.tally", received, last_seq, out_of_order, first_wrong_at, first_wrong_seq,
          payload_sum);
}  // namespace suite::remote_throughput

namespace {

namespace tx = tact::tx;
namespace net = tact::net;

using suite::remote_throughput::tally;

struct item {
  std::uint64_t seq = 0;
  std::int32_t value = 0;
};
TACT_WIRE(item, "bench.item", seq, value);

struct count_query {};
TACT_WIRE(count_query, "bench.count");

using carried = net::message_types<item, count_query, tally>;

tx::behaviour counter(const tally& t) {
  return {[t](const item& m) {
            tx::become(counter(suite::remote_throughput::counted(t, m.seq, m.value)));
          },
          [t](const tx::actor_ref& customer, count_query) { tx::send(customer, t); }};
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::remote_throughput::parameters p = suite::remote_throughput::read(o);

  const suite::remote::node_keys keys;
  suite::remote::server_process server = suite::remote::start_server<carried>(
      keys, o.threads(), [](tact::actor_system& system, net::node& node) {
        node.publish("counter", tx::spawn(system, counter({}), tx::mode::serialized));
      });
  const std::string server_at = server.contact();

  std::optional<tally> before, after;
  std::string failure;
  net::node_stats stats;
  double secs = 0;
  {
    tact::actor_system system{{.workers = o.threads()}};
    {
      net::node node{system, suite::remote::client_config(keys, server_at), carried{}};
      const tx::actor_ref counter_ref = node.remote("server", "counter");
      const std::chrono::seconds deadline{suite::remote::ask_deadline_seconds};
      // The tally, or nothing with `failure` set.
      const auto ask = [&](std::optional<tally>& into, const char* which) {
        const auto reply = tx::ask<tally>(system, counter_ref, deadline, count_query{});
        if (reply)
          into = *reply;
        else
          failure = std::string{"the counter did not answer the "} + which +
                    " ask: " + suite::remote::why_not(reply);
      };
      ask(before, "first");
      if (before) {
        const auto start = std::chrono::steady_clock::now();
        for (std::uint64_t seq = 1; seq <= p.messages; ++seq)
          tx::send(counter_ref, item{seq, suite::remote_throughput::payload(seq)});
        ask(after, "final");
        secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      stats = node.stats();
    }
    system.stop();
  }
  server.stop();

  suite::check(failure.empty(), failure);
  suite::check(before->received == 0, "the counter had counted messages before any was sent");
  suite::check(stats.undelivered == 0,
               std::to_string(stats.undelivered) + " messages were dropped as undelivered");
  suite::remote_throughput::check_tally(*after, p.messages);
  suite::report(o, suite::bench_name("remote_throughput"), "tact", secs, p.messages);
}
