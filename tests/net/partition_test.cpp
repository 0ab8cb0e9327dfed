// Two nodes cut apart by a network partition (iptables drops their
// packets) and joined again: the pending ask and the monitor are told
// node_down by the heartbeats alone, the nodes connect again once the
// partition heals, and the messages of one sender arrive at most once and
// in order throughout, including what the connections made before the
// partition still held when it healed. And under random packet loss, the
// same sender's messages arrive once each, in order.
//
// It needs root: each scenario runs in a child process, in a network
// namespace of its own (nothing outside it is touched). Without root,
// `ip` or iptables, the program exits with status 77: meson's "skipped".
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tact/net/node.hpp>

#include "support/net_nodes.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace net = tact::net;
using tact::test::eventually;
using tact::test::kv::get;
using tact::test::kv::value;

struct numbered {
  std::uint32_t seq = 0;
};
TACT_WIRE(numbered, "part.numbered", seq);

using carried = net::message_types<get, value, numbered>;

// Every get that reached alpha's actors, to account for alpha's stats.
std::atomic<std::uint64_t> gets_seen{0};

// As tact::test::kv's store and holding, but counting the gets they see.
tx::behaviour store(std::int64_t held) {
  return {[held](const tx::actor_ref& customer, const get&) {
    gets_seen.fetch_add(1);
    tx::send(customer, value{held});
  }};
}

tx::behaviour holding(std::vector<tx::actor_ref> customers) {
  return {[customers](const tx::actor_ref& customer, const get&) {
    gets_seen.fetch_add(1);
    auto more = customers;
    more.push_back(customer);
    tx::become(holding(std::move(more)));
  }};
}

// Runs a shell command, quietly; whether it exited with status 0.
bool run(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The partition: nothing from beta's address reaches alpha's, nor the
// other way. Its first rule marks each connection that carries anything
// but a connection attempt (a SYN) meanwhile: those made before it.
const std::vector<std::string> cut{"INPUT -p tcp ! --syn -j CONNMARK --set-mark 1",
                                   "INPUT -s 127.0.0.3 -d 127.0.0.2 -j DROP",
                                   "INPUT -s 127.0.0.2 -d 127.0.0.3 -j DROP"};
// What keeps the connections made before the partition cut off.
const std::vector<std::string> old_cut{"INPUT -m connmark --mark 1 -j DROP"};

// Adds ("-A") or deletes ("-D") rules.
bool firewall(const std::string& iptables, const char* action,
              const std::vector<std::string>& rules) {
  for (const std::string& rule : rules)
    if (!run(iptables + " " + action + " " + rule)) return false;
  return true;
}

constexpr int skipped = 77;  // meson's exit status for a skipped test
int report_fd = -1;          // the child's end of the pipe to the parent

// Ends the child: its one line to the parent, then its exit status. The
// systems and nodes still running are not waited for.
[[noreturn]] void finish(int status, const std::string& line) {
  const std::string text = line + "\n";
  [[maybe_unused]] const auto written = ::write(report_fd, text.data(), text.size());
  ::_exit(status);
}

net::node_config config(const std::string& at, const net::key_pair& keys, const char* peer,
                        const net::key_pair& peer_keys, const std::string& peer_at,
                        std::chrono::milliseconds silence = 500ms) {
  // Short heartbeats: a partition is seen within about `silence`.
  return {.listen = at,
          .keys = keys,
          .peers = {{peer, peer_keys.public_key, peer_at}},
          .heartbeat = 100ms,
          .heartbeat_timeout = silence};
}

// In the child: a network namespace of its own, with loopback up; returns
// the iptables command that works there (or ends the child as skipped).
std::string private_network() {
  if (::unshare(CLONE_NEWNET) != 0)
    finish(skipped, std::string{"unshare(CLONE_NEWNET): "} + std::strerror(errno) +
                        " (needs root or CAP_SYS_ADMIN)");
  if (!run("ip link set lo up") || !run("ss -Htn"))
    finish(skipped, "`ip link set lo up` or `ss` failed (iproute2?)");
  // A connection to a loopback address leaves from 127.0.0.1 unless a route
  // says otherwise: these make a connection to one node's address leave
  // from the other's, as between two machines, so that the rules, by
  // source and destination, match every packet between the nodes.
  if (!run("ip route add local 127.0.0.2 dev lo src 127.0.0.3 table local") ||
      !run("ip route add local 127.0.0.3 dev lo src 127.0.0.2 table local"))
    finish(skipped, "`ip route add local ...` failed");
  // iptables (its nf_tables backend) if it works in the fresh namespace,
  // else iptables-legacy: whichever adds and deletes every rule.
  std::string iptables;
  for (const char* tool : {"iptables", "iptables-legacy"})
    if (iptables.empty() && firewall(tool, "-A", cut) && firewall(tool, "-D", cut) &&
        firewall(tool, "-A", old_cut) && firewall(tool, "-D", old_cut))
      iptables = tool;
  if (iptables.empty()) finish(skipped, "neither iptables nor iptables-legacy works");
  return iptables;
}

// Alpha's address and beta's: any port is free in a namespace this new.
const std::string alpha_at = "tcp://127.0.0.2:7001", beta_at = "tcp://127.0.0.3:7001";

// In the child, in the namespace: the partition and its healing.
[[noreturn]] void partitioned(const std::string& iptables) {
  std::string failures;  // every check that failed, for the parent
  const auto check = [&](bool ok, const std::string& what) {
    if (!ok) failures += (failures.empty() ? "" : "; ") + what;
  };
  const net::key_pair alpha_keys = net::generate_key_pair(), beta_keys = net::generate_key_pair();
  // What the sink recorded, in storage made beforehand; it outlives the systems.
  constexpr std::uint32_t total = 2'000, before = 500, during = 1'000;
  std::vector<std::uint32_t> recorded;
  recorded.reserve(total);
  std::atomic<std::uint32_t> last{0};
  std::atomic<int> node_downs{0};
  tact::actor_system alpha_system{tact::system_config{.workers = 2}},
      beta_system{tact::system_config{.workers = 2}};
  net::node alpha{alpha_system, config(alpha_at, alpha_keys, "beta", beta_keys, beta_at),
                  carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(7), tx::mode::serialized));
  alpha.publish("mute", tx::spawn(alpha_system, holding({}), tx::mode::serialized));
  alpha.publish("sink", tx::spawn(alpha_system, {[&](const numbered& n) {
                                    recorded.push_back(n.seq);
                                    last.store(n.seq);
                                  }},
                                  tx::mode::serialized));
  net::node beta{beta_system, config(beta_at, beta_keys, "alpha", alpha_keys, alpha_at), carried{}};
  if (!eventually([&] { return beta.connected("alpha"); })) finish(1, "beta never connected");
  const tx::actor_ref kv = beta.remote("alpha", "kv"), mute = beta.remote("alpha", "mute"),
                      sink = beta.remote("alpha", "sink");
  const auto answered = [&](auto deadline) {
    const auto a = tx::ask<value>(beta_system, kv, deadline, get{"a"});
    return a.has_value() && a->v == 7;
  };
  check(answered(60s), "the store did not answer before the partition");
  beta.monitor("alpha", tx::spawn(beta_system, {[&](const tx::node_down& d) {
                                    if (d.node == "alpha") node_downs.fetch_add(1);
                                  }}));

  // An ask that only the loss of alpha can end; it has arrived once an
  // ask sent after it is answered.
  std::optional<tact::ask_error> pending;
  std::atomic<bool> pending_done{false};
  std::thread asker{[&] {
    const auto a = tx::ask<value>(beta_system, mute, 600s, get{"a"});
    if (!a.has_value()) pending = a.error();
    pending_done = true;
  }};
  check(answered(60s), "the store did not answer after the pending ask");

  // One sender, numbered messages: before, during (spread over the
  // heartbeat timeout, so some leave before the loss is seen and some
  // after), and after the partition.
  std::uint32_t seq = 0;
  for (; seq < before; ++seq) tx::send(sink, numbered{seq});
  check(firewall(iptables, "-A", cut), "adding the partition failed");
  for (; seq < before + during; ++seq) {
    tx::send(sink, numbered{seq});
    std::this_thread::sleep_for(1ms);
  }
  if (!eventually([&] { return pending_done.load(); }))
    finish(1, "the pending ask did not end after the partition");
  asker.join();
  check(pending == tact::ask_error::node_down, "the pending ask did not end with node_down");
  check(eventually([&] { return node_downs.load() == 1; }), "the monitor was not told");
  check(beta.stats().undelivered >= 1, "no send during the partition was counted undelivered");

  // Healed: the nodes connect again by themselves, and the store answers.
  // After a heal, TCP resends what an old connection had not delivered,
  // and retries a new connection, each on a backoff timer of its own, so
  // either may reach the peer first. Here the new one does, for certain:
  // the old connections stay cut off until the messages sent after the
  // heal have arrived.
  const auto healed = std::chrono::steady_clock::now();
  check(firewall(iptables, "-A", old_cut) && firewall(iptables, "-D", cut), "healing failed");
  if (!eventually([&] { return answered(1s); }))
    finish(1, "the store did not answer after the partition healed");
  const auto back_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - healed);
  // On a connection that lives, nothing is lost: every one of these arrives.
  for (; seq < total; ++seq) tx::send(sink, numbered{seq});
  check(eventually([&] { return last.load() == total - 1; }), "the last message never came");
  // Then the old connections deliver what they held, or give up; once no
  // socket is left half closed, alpha reads the last of it (half a second).
  check(firewall(iptables, "-D", old_cut), "deleting the rule for old connections failed");
  check(eventually([] {
          return run("test -z \"$(ss -Htn state fin-wait-1 state close-wait state closing)\"");
        }),
        "the old connections never closed");
  std::this_thread::sleep_for(500ms);
  beta_system.await_quiescence();
  alpha_system.await_quiescence();

  // At most once and in order: strictly increasing, gaps allowed.
  std::uint32_t out_of_order = 0, after_heal = 0;
  std::string first;
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    if (i > 0 && recorded[i] <= recorded[i - 1] && out_of_order++ == 0)
      first = std::to_string(recorded[i]) + " after " + std::to_string(recorded[i - 1]);
    after_heal += recorded[i] >= before + during;
  }
  check(out_of_order == 0,
        std::to_string(out_of_order) + " out of order or repeated, first " + first);
  check(after_heal == total - before - during, "a message sent after the heal was lost");
  // alpha counts what it delivered: the sink's messages and the gets,
  // each of which beta sent.
  const net::node_stats a = alpha.stats(), b = beta.stats();
  check(a.received == recorded.size() + gets_seen.load() && a.received <= b.sent,
        "alpha received " + std::to_string(a.received) + ", its actors saw " +
            std::to_string(recorded.size() + gets_seen.load()) + ", beta sent " +
            std::to_string(b.sent));
  check(b.peers_lost >= 1 && a.malformed == 0 && a.unknown_targets == 0, "unexpected stats");
  const std::string seen = "with " + iptables + ": " + std::to_string(recorded.size()) + " of " +
                           std::to_string(total) + " messages recorded, beta sent " +
                           std::to_string(b.sent) + ", undelivered " +
                           std::to_string(b.undelivered) + ", answered again " +
                           std::to_string(back_after.count()) + " ms after the heal";
  finish(failures.empty() ? 0 : 1, failures.empty() ? seen : failures + " (" + seen + ")");
}

// In the child, in the namespace: a tenth of the packets between the two
// nodes dropped at random while one sender sends numbered messages. TCP
// resends what is lost, so while the connection lives (a heartbeat
// timeout longer than TCP's retries) every message arrives, once, in
// order; if it did not live, they still arrive at most once, in order.
[[noreturn]] void lossy(const std::string& iptables) {
  const std::vector<std::string> loss{
      "INPUT -s 127.0.0.3 -d 127.0.0.2 -m statistic --mode random --probability 0.1 -j DROP",
      "INPUT -s 127.0.0.2 -d 127.0.0.3 -m statistic --mode random --probability 0.1 -j DROP"};
  if (!firewall(iptables, "-A", loss) || !firewall(iptables, "-D", loss))
    finish(skipped, "the statistic match of " + iptables + " does not work");
  const net::key_pair alpha_keys = net::generate_key_pair(), beta_keys = net::generate_key_pair();
  constexpr std::uint32_t total = 5'000, burst = 100;
  std::vector<std::uint32_t> recorded;
  recorded.reserve(total);
  std::atomic<std::uint32_t> last{0};
  tact::actor_system alpha_system{tact::system_config{.workers = 2}},
      beta_system{tact::system_config{.workers = 2}};
  net::node alpha{alpha_system, config(alpha_at, alpha_keys, "beta", beta_keys, beta_at, 10s),
                  carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(7), tx::mode::serialized));
  alpha.publish("sink", tx::spawn(alpha_system, {[&](const numbered& n) {
                                    recorded.push_back(n.seq);
                                    last.store(n.seq);
                                  }},
                                  tx::mode::serialized));
  net::node beta{beta_system, config(beta_at, beta_keys, "alpha", alpha_keys, alpha_at, 10s),
                 carried{}};
  const tx::actor_ref kv = beta.remote("alpha", "kv"), sink = beta.remote("alpha", "sink");
  const auto answered = [&](auto deadline) {
    const auto a = tx::ask<value>(beta_system, kv, deadline, get{"a"});
    return a.has_value() && a->v == 7;
  };
  if (!answered(60s)) finish(1, "the store did not answer before the loss");
  if (!firewall(iptables, "-A", loss)) finish(1, "adding the loss failed");
  // Bursts, each followed by an ask: the sender keeps pace with the lossy
  // connection instead of queueing everything at once.
  for (std::uint32_t seq = 0; seq < total;) {
    for (const std::uint32_t end = seq + burst; seq < end; ++seq) tx::send(sink, numbered{seq});
    static_cast<void>(answered(60s));
  }
  if (!firewall(iptables, "-D", loss)) finish(1, "removing the loss failed");
  // The last message has come, or was lost with a connection.
  const bool lived = beta.stats().peers_lost == 0;
  if (!eventually([&] { return answered(1s); }))
    finish(1, "the store did not answer after the loss");
  if (lived && !eventually([&] { return last.load() == total - 1; }))
    finish(1, "the last message never came");
  alpha_system.await_quiescence();
  std::uint32_t out_of_order = 0;
  for (std::size_t i = 1; i < recorded.size(); ++i) out_of_order += recorded[i] <= recorded[i - 1];
  const std::string seen = "with " + iptables + ": " + std::to_string(recorded.size()) + " of " +
                           std::to_string(total) + " recorded, connections lost " +
                           std::to_string(beta.stats().peers_lost);
  if (out_of_order != 0)
    finish(1, std::to_string(out_of_order) + " out of order or repeated (" + seen + ")");
  if (lived && recorded.size() != total)
    finish(1, "a message was lost while its connection lived (" + seen + ")");
  if (alpha.stats().malformed != 0) finish(1, "malformed frames (" + seen + ")");
  finish(0, seen);
}

// Runs `scenario` in a child process, in a network namespace of its own,
// and reports what it found; exits as skipped if the child could not make
// the namespace.
void in_private_network(void (*scenario)(const std::string& iptables)) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // not left behind if the test is killed
    report_fd = fds[1];
    try {
      scenario(private_network());
    } catch (const std::exception& e) {
      finish(1, std::string{"the scenario threw: "} + e.what());
    }
    finish(1, "the scenario returned");
  }
  ::close(fds[1]);
  std::string line;
  char buffer[256];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) line.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  if (WIFEXITED(status) && WEXITSTATUS(status) == skipped) {
    WARN("skipped: " << line);
    std::exit(skipped);  // meson shows the test as skipped
  }
  INFO("the child: " << line);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST_CASE("a partition ends pending asks with node_down, heals, and loses no order") {
  in_private_network(&partitioned);
}

TEST_CASE("under packet loss, one sender's messages arrive once each, in order") {
  in_private_network(&lossy);
}
