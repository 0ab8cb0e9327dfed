// Three nodes, each in a process of its own, each sending a million
// numbered messages to each of the other two (TACT_STRESS_SCALE scales
// the count): every message arrives exactly once, and each sender's
// messages arrive at each receiver in the order sent. Nothing is dropped
// on loopback between live processes, so conservation is exact: each
// receiver counts exactly what each sender sent it.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <tact/net/node.hpp>

#include "support/net_nodes.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace net = tact::net;
using tact::test::trio_config;

struct numbered {
  std::uint32_t sender = 0;
  std::uint64_t seq = 0;
};
TACT_WIRE(numbered, "mesh.numbered", sender, seq);

// Asks a sink how many it has counted from a sender: it paces the sender.
struct how_many {
  std::uint32_t sender = 0;
};
TACT_WIRE(how_many, "mesh.how_many", sender);

struct counted {
  std::uint64_t n = 0;
};
TACT_WIRE(counted, "mesh.counted", n);

using carried = net::message_types<numbered, how_many, counted>;

// What a sink saw of each sender: how many, and how many were not the one
// after the last (a gap, a duplicate or a reordering).
struct tally {
  std::array<std::uint64_t, 3> count{};
  std::array<std::uint64_t, 3> wrong{};
  std::atomic<std::uint64_t> total{0};
};

// One node's process: sends `per_peer` messages to each other node's sink,
// pacing itself by an ask every `window` messages, then waits until its own
// sink has counted what the others send it. Reports on `report`:
// "count0 count1 count2 wrong sent undelivered malformed". Stays up until
// `release` closes, so that no node leaves while another still sends to it.
int run_node(const trio_config& config, std::size_t me, std::uint64_t per_peer, int report,
             int release) {
  tally seen;
  tact::actor_system system{tact::test::two_workers()};
  int status = 0;
  {
    net::node node{system, config.of(me), carried{}};
    node.publish("sink", tx::spawn(system,
                                   {[&seen](const numbered& m) {
                                      const std::uint32_t s = m.sender % 3;
                                      if (m.seq != seen.count[s]) ++seen.wrong[s];
                                      ++seen.count[s];
                                      seen.total.fetch_add(1, std::memory_order_release);
                                    },
                                    [&seen](const tx::actor_ref& customer, const how_many& q) {
                                      tx::send(customer, counted{seen.count[q.sender % 3]});
                                    }},
                                   tx::mode::serialized));
    std::array<tx::actor_ref, 3> sinks;
    for (std::size_t other = 0; other < 3; ++other)
      if (other != me) sinks[other] = node.remote(trio_config::names[other], "sink");
    constexpr std::uint64_t window = 50'000;
    for (std::uint64_t seq = 0; seq < per_peer && status == 0; ++seq) {
      for (std::size_t other = 0; other < 3; ++other)
        if (other != me) tx::send(sinks[other], numbered{static_cast<std::uint32_t>(me), seq});
      if ((seq + 1) % window != 0) continue;
      // At most one window in flight per peer.
      for (std::size_t other = 0; other < 3; ++other)
        if (other != me &&
            !tx::ask<counted>(system, sinks[other], 600s, how_many{static_cast<std::uint32_t>(me)}))
          status = 3;
    }
    while (status == 0 && seen.total.load(std::memory_order_acquire) < 2 * per_peer)
      std::this_thread::sleep_for(1ms);
    system.await_quiescence();
    const net::node_stats s = node.stats();
    const std::string line = std::to_string(seen.count[0]) + ' ' + std::to_string(seen.count[1]) +
                             ' ' + std::to_string(seen.count[2]) + ' ' +
                             std::to_string(seen.wrong[0] + seen.wrong[1] + seen.wrong[2]) + ' ' +
                             std::to_string(s.sent) + ' ' + std::to_string(s.undelivered) + ' ' +
                             std::to_string(s.malformed) + '\n';
    if (::write(report, line.data(), line.size()) != static_cast<ssize_t>(line.size())) status = 4;
    char c = 0;
    while (::read(release, &c, 1) > 0) {
    }
  }
  system.stop();
  return status;
}

}  // namespace

TEST_CASE("three node processes exchange millions of numbered messages, each once and in order") {
  const trio_config config;
  const std::uint64_t per_peer = tact::test::scaled(1'000'000);
  int release[2];
  REQUIRE(::pipe(release) == 0);
  std::array<pid_t, 3> pids{};
  std::array<int, 3> reports{};
  for (std::size_t me = 0; me < 3; ++me) {
    int report[2];
    REQUIRE(::pipe(report) == 0);
    pids[me] = ::fork();
    REQUIRE(pids[me] >= 0);
    if (pids[me] == 0) {
      ::close(report[0]);
      ::close(release[1]);
      int status = 2;
      try {
        status = run_node(config, me, per_peer, report[1], release[0]);
      } catch (...) {
      }
      ::_exit(status);
    }
    ::close(report[1]);
    reports[me] = report[0];
  }
  ::close(release[0]);
  std::array<std::string, 3> lines;
  for (std::size_t me = 0; me < 3; ++me) {
    for (char c; ::read(reports[me], &c, 1) == 1 && c != '\n';) lines[me] += c;
    ::close(reports[me]);
  }
  ::close(release[1]);  // every node has counted all it was sent: all may go
  for (std::size_t me = 0; me < 3; ++me) {
    int status = 0;
    REQUIRE(::waitpid(pids[me], &status, 0) == pids[me]);
    INFO(trio_config::names[me] << ": " << lines[me]);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    std::array<unsigned long long, 7> f{};
    REQUIRE(std::sscanf(lines[me].c_str(), "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
                        &f[2], &f[3], &f[4], &f[5], &f[6]) == 7);
    for (std::size_t from = 0; from < 3; ++from) CHECK(f[from] == (from == me ? 0 : per_peer));
    CHECK(f[3] == 0);             // out of order, duplicated or missing
    CHECK(f[4] >= 2 * per_peer);  // sent: the messages, and the pacing asks
    CHECK(f[5] == 0);             // undelivered
    CHECK(f[6] == 0);             // malformed
  }
}
