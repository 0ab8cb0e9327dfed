// Nodes over loopback, as a user writes them: transactional actors send
// to and ask actors another node published, each message arriving once
// and in order per sender; a type the peer does not carry is refused at
// send; and when a peer goes (its node ends, its process is stopped or
// killed) every pending ask on it ends at once with node_down.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
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
using tact::test::pair_config;
using tact::test::trio_config;
using tact::test::two_workers;
using tact::test::wait_connected;
using namespace tact::test::kv;

struct numbered {
  std::uint32_t sender = 0;
  std::uint32_t seq = 0;
};
TACT_WIRE(numbered, "test.numbered", sender, seq);

// Only one of the two nodes carries it.
struct extra {
  std::string note;
};
TACT_WIRE(extra, "test.extra", note);

using carried = net::message_types<numbered, get, put, value>;

// What a serialized sink received, per sender, in storage made beforehand.
struct received {
  static constexpr std::size_t senders = 2, most = 200'000;
  std::array<std::vector<std::uint32_t>, senders> seqs;
  std::atomic<std::uint64_t> total{0};
  received() {
    for (auto& s : seqs) s.reserve(most);
  }
};

}  // namespace

TEST_CASE("messages from each sender reach a published actor once each, in order") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  static received got;
  for (auto& s : got.seqs) s.clear();
  got.total = 0;
  const tx::actor_ref sink = tx::spawn(alpha_system, {[](const numbered& n) {
                                         got.seqs.at(n.sender).push_back(n.seq);
                                         got.total.fetch_add(1, std::memory_order_release);
                                       }},
                                       tx::mode::serialized);
  const std::uint32_t per_sender = static_cast<std::uint32_t>(tact::test::scaled(20'000));
  {
    net::node alpha{alpha_system, config.alpha(), carried{}};
    alpha.publish("sink", sink);
    net::node beta{beta_system, config.beta(), carried{}};
    // Sent at once: they wait for the connection, in order.
    const tx::actor_ref remote = beta.remote("alpha", "sink");
    std::thread other{[&] {
      for (std::uint32_t i = 0; i < per_sender; ++i) tx::send(remote, numbered{1, i});
    }};
    for (std::uint32_t i = 0; i < per_sender; ++i) tx::send(remote, numbered{0, i});
    other.join();
    REQUIRE(
        eventually([&] { return got.total.load(std::memory_order_acquire) == 2 * per_sender; }));
    beta_system.await_quiescence();
    alpha_system.await_quiescence();
    CHECK(got.total.load() == 2 * per_sender);
    for (const auto& seqs : got.seqs) {
      REQUIRE(seqs.size() == per_sender);
      std::uint32_t out_of_order = 0;
      for (std::uint32_t i = 0; i < per_sender; ++i) out_of_order += seqs[i] != i;
      CHECK(out_of_order == 0);
    }
    CHECK(beta.stats().sent == 2 * per_sender);
    CHECK(alpha.stats().received == 2 * per_sender);
    CHECK(alpha.stats().malformed == 0);
    CHECK(alpha.stats().unknown_targets == 0);
  }
}

TEST_CASE("an actor on another node answers an ask, after the puts sent before it") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node alpha{alpha_system, config.alpha(), carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(0), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), carried{}};
  const tx::actor_ref kv = beta.remote("alpha", "kv");
  for (std::int64_t i = 1; i <= 100; ++i) tx::send(kv, put{"a", i});
  const auto answer = tx::ask<value>(beta_system, kv, 60s, get{"a"});
  REQUIRE(answer.has_value());
  CHECK(answer->v == 100);

  // A name nobody published: dropped there, counted; the ask times out.
  const tx::actor_ref nobody = beta.remote("alpha", "nobody");
  const auto none = tx::ask<value>(beta_system, nobody, 200ms, get{"a"});
  CHECK(none.error() == tact::ask_error::timeout);
  CHECK(eventually([&] { return alpha.stats().unknown_targets == 1; }));

  // The reply actors of both asks were released once answered or dropped.
  beta_system.await_quiescence();
  alpha_system.await_quiescence();
}

TEST_CASE("a message of a type the peer does not carry is refused at send, naming the type") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node alpha{alpha_system, config.alpha(), carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(0), tx::mode::serialized));
  net::node beta{beta_system, config.beta(),
                 net::message_types<numbered, get, put, value, extra>{}};
  wait_connected(beta, "alpha");
  const tx::actor_ref kv = beta.remote("alpha", "kv");
  const auto refused = tx::ask<value>(beta_system, kv, 60s, extra{"x"});
  REQUIRE(refused.error() == tact::ask_error::failed);
  try {
    std::rethrow_exception(refused.exception());
  } catch (const std::invalid_argument& e) {
    CHECK(std::string{e.what()}.find("test.extra") != std::string::npos);
  }
  // A type neither node carries is refused likewise, before any peer is asked.
  struct unknown {};
  const auto unlisted = tx::ask<value>(beta_system, kv, 60s, unknown{});
  CHECK(unlisted.error() == tact::ask_error::failed);
  CHECK(alpha.stats().received == 0);
  CHECK(alpha.stats().unknown_types == 0);
  // The types both carry still cross.
  CHECK(tx::ask<value>(beta_system, kv, 60s, get{"a"}).has_value());
}

TEST_CASE("pending asks end at once with node_down when the asked node ends") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  auto alpha = std::make_unique<net::node>(alpha_system, config.alpha(), carried{});
  alpha->publish("mute", tx::spawn(alpha_system, holding({}), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), carried{}};
  wait_connected(beta, "alpha");
  const tx::actor_ref mute = beta.remote("alpha", "mute");
  std::vector<std::thread> askers;
  std::vector<std::optional<tact::ask_error>> outcomes(3);
  for (auto& outcome : outcomes)
    askers.emplace_back(
        [&] { outcome = tx::ask<value>(beta_system, mute, 600s, get{"a"}).error(); });
  REQUIRE(eventually([&] { return alpha->stats().received == outcomes.size(); }));
  alpha.reset();  // its connections close
  for (auto& t : askers) t.join();
  for (const auto& outcome : outcomes) CHECK(outcome == tact::ask_error::node_down);
  CHECK(beta.stats().peers_lost >= 1);
  // Until the peer is back, a send is dropped and an ask told at once.
  CHECK(tx::ask<value>(beta_system, mute, 600s, get{"a"}).error() == tact::ask_error::node_down);
  CHECK(beta.stats().undelivered >= 1);
}

TEST_CASE("a client whose key is not on the allow-list has nothing delivered") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system intruder_system{two_workers()};
  static std::atomic<int> delivered{0};
  delivered = 0;
  net::node alpha{alpha_system, config.alpha(), carried{}};
  alpha.publish("sink", tx::spawn(alpha_system, {[](const numbered&) { delivered.fetch_add(1); }}));
  // It knows alpha's key and address, and lists alpha, but alpha does not list it.
  net::node_config intruder_config = config.beta();
  intruder_config.keys = net::generate_key_pair();
  net::node intruder{intruder_system, intruder_config, carried{}};
  const tx::actor_ref sink = intruder.remote("alpha", "sink");
  for (std::uint32_t i = 0; i < 100; ++i) tx::send(sink, numbered{0, i});
  REQUIRE(eventually([&] { return alpha.stats().refused_clients >= 1; }));
  CHECK_FALSE(intruder.connected("alpha"));
  CHECK(alpha.stats().received == 0);
  CHECK(delivered.load() == 0);
}

// A peer in a process of its own, stopped (SIGSTOP: its TCP connections
// stand, only heartbeats tell), resumed, then killed (SIGKILL), each time
// with asks pending on it.
TEST_CASE("asks pending on a stopped or killed peer process end with node_down") {
  pair_config config;
  const auto quick = [](net::node_config c) {
    c.heartbeat = 100ms;
    c.heartbeat_timeout = 500ms;
    return c;
  };
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      tact::actor_system system{two_workers()};
      net::node alpha{system, quick(config.alpha()), carried{}};
      alpha.publish("mute", tx::spawn(system, holding({}), tx::mode::serialized));
      alpha.publish("kv", tx::spawn(system, store(7), tx::mode::serialized));
      for (;;) ::pause();
    } catch (...) {
      ::_exit(2);
    }
  }
  tact::actor_system system{two_workers()};
  net::node beta{system, quick(config.beta()), carried{}};
  wait_connected(beta, "alpha");
  const tx::actor_ref mute = beta.remote("alpha", "mute");
  const tx::actor_ref kv = beta.remote("alpha", "kv");
  const auto pending_then = [&](int signal) {
    std::optional<tact::ask_error> outcome;
    std::thread asker{[&] { outcome = tx::ask<value>(system, mute, 600s, get{"a"}).error(); }};
    // The ask has left once the service answers one asked after it.
    REQUIRE(tx::ask<value>(system, kv, 60s, get{"a"}).has_value());
    ::kill(child, signal);
    asker.join();
    return outcome;
  };
  CHECK(pending_then(SIGSTOP) == tact::ask_error::node_down);
  ::kill(child, SIGCONT);
  wait_connected(beta, "alpha");
  // The same process again: its names answer, once its own connection to
  // this node is back too (a reply sent before then is dropped there).
  CHECK(eventually([&] {
    const auto again = tx::ask<value>(system, kv, 1s, get{"a"});
    return again.has_value() && again->v == 7;
  }));
  CHECK(pending_then(SIGKILL) == tact::ask_error::node_down);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(beta.stats().peers_lost >= 2);
}

namespace {

// An actor reference inside a message: the receiver gets a working proxy.
struct subscribe {
  std::string topic;
  tx::actor_ref subscriber;
};
TACT_WIRE(subscribe, "test.subscribe", topic, subscriber);

struct notice {
  std::string topic;
  std::uint32_t seq = 0;
};
TACT_WIRE(notice, "test.notice", topic, seq);

using with_refs = net::message_types<numbered, get, put, value, subscribe, notice>;

// Publishes to every subscriber it is sent: `count` notices each.
tx::behaviour publisher(std::uint32_t count) {
  return {[count](const subscribe& s) {
    for (std::uint32_t i = 0; i < count; ++i) tx::send(s.subscriber, notice{s.topic, i});
  }};
}

}  // namespace

TEST_CASE("an actor reference inside a message arrives as a working proxy") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  static std::atomic<std::uint32_t> in_order{0}, wrong{0};
  in_order = 0;
  wrong = 0;
  net::node alpha{alpha_system, config.alpha(), with_refs{}};
  alpha.publish("news", tx::spawn(alpha_system, publisher(1'000), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), with_refs{}};
  const tx::actor_ref reader = tx::spawn(beta_system, {[](const notice& n) {
                                           if (n.topic != "weather" || n.seq != in_order.load())
                                             wrong.fetch_add(1);
                                           in_order.fetch_add(1);
                                         }},
                                         tx::mode::serialized);
  tx::send(beta.remote("alpha", "news"), subscribe{"weather", reader});
  REQUIRE(eventually([] { return in_order.load() == 1'000; }));
  CHECK(wrong.load() == 0);
  // An empty reference crosses as one.
  tx::send(beta.remote("alpha", "news"), subscribe{"nobody", {}});
  alpha_system.await_quiescence();
  CHECK(alpha.stats().malformed == 0);
}

// gamma's actor, known to beta by name, is passed by beta to alpha, which
// asks it: the reference works from a node that never knew gamma's name,
// through beta.
TEST_CASE("a reference passed on to a third node reaches its actor") {
  const trio_config config;
  std::array<std::unique_ptr<tact::actor_system>, 3> systems;
  for (auto& s : systems) s = std::make_unique<tact::actor_system>(two_workers());
  std::array<std::unique_ptr<net::node>, 3> nodes;
  for (std::size_t i = 0; i < 3; ++i)
    nodes[i] = std::make_unique<net::node>(*systems[i], config.of(i), with_refs{});
  tact::actor_system& alpha_system = *systems[0];
  nodes[2]->publish("kv", tx::spawn(*systems[2], store(42), tx::mode::serialized));
  // alpha's actor asks whatever store it is introduced to, and reports the
  // answer to `report` (main's ask customer).
  static std::atomic<std::int64_t> answer{0};
  answer = 0;
  const tx::actor_ref answers =
      tx::spawn(alpha_system, {[](const value& v) { answer.store(v.v); }}, tx::mode::serialized);
  const tx::actor_ref asker =
      tx::spawn(alpha_system,
                {[answers](const subscribe& s) { tx::send(s.subscriber, answers, get{s.topic}); }});
  nodes[0]->publish("asker", asker);
  // beta introduces gamma's store to alpha's asker.
  tx::send(nodes[1]->remote("alpha", "asker"), subscribe{"a", nodes[1]->remote("gamma", "kv")});
  REQUIRE(eventually([] { return answer.load() == 42; }));
  // Messages went alpha -> beta -> gamma and back.
  CHECK(nodes[1]->stats().received >= 2);
  CHECK(nodes[2]->stats().received == 1);
  for (auto& n : nodes) CHECK(n->stats().malformed == 0);
}

namespace {

// What a watcher was told, in order, as text.
struct told {
  std::mutex lock;
  std::vector<std::string> lines;
  std::size_t size() {
    std::lock_guard guard{lock};
    return lines.size();
  }
  std::vector<std::string> seen() {
    std::lock_guard guard{lock};
    return lines;
  }
  void add(std::string line) {
    std::lock_guard guard{lock};
    lines.push_back(std::move(line));
  }
};

tx::actor_ref watcher_of(tact::actor_system& system, told& t) {
  return tx::spawn(
      system, {[&t](const tx::node_down& d) { t.add("node_down " + d.node); },
               [&t](const tx::actor_down& d) {
                 t.add("actor_down " + d.node + " " + d.name + (d.node_lost ? " lost" : " gone"));
               }});
}

}  // namespace

TEST_CASE(
    "a monitor of a published actor is told once when its name goes, and not after demonitor") {
  const pair_config config;
  told kv_told, old_told, spare_told, nobody_told;  // outlive the watchers
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node alpha{alpha_system, config.alpha(), carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(1), tx::mode::serialized));
  alpha.publish("old", tx::spawn(alpha_system, store(2), tx::mode::serialized));
  alpha.publish("spare", tx::spawn(alpha_system, store(3), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), carried{}};
  beta.monitor("alpha", "kv", watcher_of(beta_system, kv_told));
  beta.monitor("alpha", "old", watcher_of(beta_system, old_told));
  const auto spare = beta.monitor("alpha", "spare", watcher_of(beta_system, spare_told));
  beta.monitor("alpha", "nobody", watcher_of(beta_system, nobody_told));
  // Not published there when the monitor arrives: told at once.
  REQUIRE(eventually([&] { return nobody_told.size() == 1; }));
  CHECK(nobody_told.seen()[0] == "actor_down alpha nobody gone");
  // The watches have arrived once an ask sent after them is answered.
  REQUIRE(tx::ask<value>(beta_system, beta.remote("alpha", "kv"), 60s, get{"a"}).has_value());
  beta.demonitor(spare);
  alpha.unpublish("spare");
  alpha.publish("old", tx::spawn(alpha_system, store(4), tx::mode::serialized));  // another actor
  alpha.unpublish("kv");
  REQUIRE(eventually([&] { return kv_told.size() == 1; }));
  CHECK(kv_told.seen()[0] == "actor_down alpha kv gone");
  REQUIRE(eventually([&] { return old_told.size() == 1; }));
  CHECK(old_told.seen()[0] == "actor_down alpha old gone");
  // Down frames come in order: spare's, if any, came before kv's.
  beta_system.await_quiescence();
  CHECK(spare_told.size() == 0);
  // Told once: a name published and unpublished again tells nobody.
  alpha.publish("kv", tx::spawn(alpha_system, store(5), tx::mode::serialized));
  alpha.unpublish("kv");
  REQUIRE(tx::ask<value>(beta_system, beta.remote("alpha", "old"), 60s, get{"a"}).has_value());
  beta_system.await_quiescence();
  CHECK(kv_told.size() == 1);
}

TEST_CASE("monitors of a node and of its actors are told when the node goes") {
  const pair_config config;
  told node_told, kv_told, forgotten_told, late_told;  // outlive the watchers
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  auto alpha = std::make_unique<net::node>(alpha_system, config.alpha(), carried{});
  alpha->publish("kv", tx::spawn(alpha_system, store(1), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), carried{}};
  beta.monitor("alpha", watcher_of(beta_system, node_told));
  beta.monitor("alpha", "kv", watcher_of(beta_system, kv_told));
  beta.demonitor(beta.monitor("alpha", watcher_of(beta_system, forgotten_told)));
  REQUIRE(tx::ask<value>(beta_system, beta.remote("alpha", "kv"), 60s, get{"a"}).has_value());
  alpha.reset();
  REQUIRE(eventually([&] { return node_told.size() == 1 && kv_told.size() == 1; }));
  CHECK(node_told.seen()[0] == "node_down alpha");
  CHECK(kv_told.seen()[0] == "actor_down alpha kv lost");
  // A monitor of a node lost now is told at once.
  beta.monitor("alpha", watcher_of(beta_system, late_told));
  REQUIRE(eventually([&] { return late_told.size() == 1; }));
  beta_system.await_quiescence();
  CHECK(forgotten_told.size() == 0);
  CHECK(node_told.size() == 1);
  CHECK_THROWS_AS(beta.monitor("gamma", watcher_of(beta_system, late_told)), std::invalid_argument);
}

// A service need not know where its clients listen: a client's hello says
// where, and the service connects there to answer.
TEST_CASE("a service answers a client it lists without an address, where the client's hello says") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node_config service = config.alpha();
  service.peers[0].address.clear();  // beta, listed by key only
  net::node alpha{alpha_system, service, carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(7), tx::mode::serialized));
  // Nothing to send it before it says where it listens.
  CHECK_THROWS_AS(alpha.remote("beta", "kv"), std::invalid_argument);
  net::node beta{beta_system, config.beta(), carried{}};
  const auto answer = tx::ask<value>(beta_system, beta.remote("alpha", "kv"), 60s, get{"a"});
  REQUIRE(answer.has_value());
  CHECK(answer->v == 7);
  // Now alpha knows where beta is, and can reach what beta publishes.
  beta.publish("kv", tx::spawn(beta_system, store(8), tx::mode::serialized));
  const auto back = tx::ask<value>(alpha_system, alpha.remote("beta", "kv"), 60s, get{"a"});
  REQUIRE(back.has_value());
  CHECK(back->v == 8);
}

// A handler's sends to a remote actor are staged like its other sends:
// they leave the node only if the handler commits.
TEST_CASE("a transactional handler's remote sends leave only if it commits") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  static std::mutex lock;
  static std::vector<std::uint32_t> arrived;
  arrived.clear();
  tact::actor_system beta_system{{.workers = 2, .on_rollback = [](const tx::rollback&) {}}};
  net::node alpha{alpha_system, config.alpha(), carried{}};
  alpha.publish("sink", tx::spawn(alpha_system, {[](const numbered& n) {
                                    std::lock_guard guard{lock};
                                    arrived.push_back(n.seq);
                                  }},
                                  tx::mode::serialized));
  alpha.publish("kv", tx::spawn(alpha_system, store(3), tx::mode::serialized));
  net::node beta{beta_system, config.beta(), carried{}};
  const tx::actor_ref sink = beta.remote("alpha", "sink");
  // Sends seq, then throws for odd ones: only even ones commit.
  const tx::actor_ref relay = tx::spawn(beta_system, {[sink](const numbered& n) {
                                          tx::send(sink, n);
                                          if (n.seq % 2 != 0) throw std::runtime_error{"odd"};
                                        }},
                                        tx::mode::serialized);
  for (std::uint32_t i = 0; i < 100; ++i) tx::send(relay, numbered{0, i});
  beta_system.await_quiescence();
  // Sent after the relay's: arrives after them on the same connection.
  REQUIRE(tx::ask<value>(beta_system, beta.remote("alpha", "kv"), 60s, get{"a"}).has_value());
  alpha_system.await_quiescence();
  std::lock_guard guard{lock};
  REQUIRE(arrived.size() == 50);
  for (std::uint32_t i = 0; i < 50; ++i) CHECK(arrived[i] == 2 * i);
  CHECK(beta.stats().sent == 50 + 1);
}

// A connection idle for idle_after closes; the next message opens a new
// one. Retiring ends nothing: no ask fails, no monitor is told, and a
// reference exchanged before works after.
TEST_CASE("an idle connection retires, and the next message reopens it with nothing void") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  static std::atomic<std::uint32_t> in_order{0}, wrong{0};
  in_order = 0;
  wrong = 0;
  net::node_config alpha_config = config.alpha(), beta_config = config.beta();
  alpha_config.idle_after = beta_config.idle_after = 200ms;
  net::node alpha{alpha_system, alpha_config, with_refs{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(5), tx::mode::serialized));
  // Holds the subscriber it is sent, and sends it one notice per put.
  struct announcer {
    static tx::behaviour with(std::optional<tx::actor_ref> subscriber, std::uint32_t sent) {
      return {[](const subscribe& s) { tx::become(with(s.subscriber, 0)); },
              [subscriber, sent](const put&) {
                if (subscriber) tx::send(*subscriber, notice{"news", sent});
                tx::become(with(subscriber, sent + 1));
              }};
    }
  };
  alpha.publish("news", tx::spawn(alpha_system, announcer::with({}, 0), tx::mode::serialized));
  net::node beta{beta_system, beta_config, with_refs{}};
  const tx::actor_ref kv = beta.remote("alpha", "kv"), news = beta.remote("alpha", "news");
  const tx::actor_ref reader = tx::spawn(beta_system, {[](const notice& n) {
                                           if (n.seq != in_order.load()) wrong.fetch_add(1);
                                           in_order.fetch_add(1);
                                         }},
                                         tx::mode::serialized);
  REQUIRE(tx::ask<value>(beta_system, kv, 60s, get{"a"}).has_value());
  tx::send(news, subscribe{"news", reader});
  tx::send(news, put{"a", 1});
  REQUIRE(eventually([] { return in_order.load() == 1; }));

  // alpha holds beta's reader (a reference beta sent), which needs no
  // heartbeats: alpha's connection to beta retires. beta waits for nothing
  // of alpha's (the ask's customer was released when answered), but it
  // exported the reader: its connection to alpha stays, so that alpha's
  // loss would reach the actors alpha holds.
  REQUIRE(eventually([&] { return alpha.stats().retired >= 1; }));
  CHECK(beta.stats().retired == 0);

  // The reference alpha holds works on a new connection, in order.
  for (std::int64_t i = 2; i <= 50; ++i) tx::send(news, put{"a", i});
  REQUIRE(eventually([] { return in_order.load() == 50; }));
  CHECK(wrong.load() == 0);
  // And an ask from alpha to beta opens its connection in turn.
  beta.publish("kv", tx::spawn(beta_system, store(7), tx::mode::serialized));
  const auto back = tx::ask<value>(alpha_system, alpha.remote("beta", "kv"), 60s, get{"a"});
  REQUIRE(back.has_value());
  CHECK(back->v == 7);
  CHECK(alpha.stats().peers_lost == 0);
  CHECK(beta.stats().peers_lost == 0);
  CHECK(alpha.stats().undelivered == 0);
  CHECK(beta.stats().undelivered == 0);
}

TEST_CASE("connections whose ends wait for nothing retire both ways, and a monitor keeps one") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node_config alpha_config = config.alpha(), beta_config = config.beta();
  alpha_config.idle_after = beta_config.idle_after = 200ms;
  net::node alpha{alpha_system, alpha_config, carried{}};
  alpha.publish("kv", tx::spawn(alpha_system, store(5), tx::mode::serialized));
  auto beta = std::make_unique<net::node>(beta_system, beta_config, carried{});
  const tx::actor_ref kv = beta->remote("alpha", "kv");
  REQUIRE(tx::ask<value>(beta_system, kv, 60s, get{"a"}).has_value());
  REQUIRE(eventually([&] { return alpha.stats().retired >= 1 && beta->stats().retired >= 1; }));
  // Both reopen on demand.
  REQUIRE(tx::ask<value>(beta_system, kv, 60s, get{"a"})->v == 5);
  CHECK(alpha.stats().peers_lost == 0);
  CHECK(beta->stats().peers_lost == 0);

  // alpha monitors beta once its connection has retired again: the
  // monitor opens it, and it stays, heartbeats and all, for as long as the
  // monitor lives, which hears of beta's end.
  static std::atomic<std::uint32_t> told{0};
  told = 0;
  const tx::actor_ref watcher =
      tx::spawn(alpha_system, {[](const tx::node_down&) { told.fetch_add(1); }});
  REQUIRE(eventually([&] { return alpha.stats().retired >= 2; }));
  alpha.monitor("beta", watcher);
  std::this_thread::sleep_for(1s);  // five idle periods: could only miss a retirement
  const std::uint64_t retired = alpha.stats().retired;
  std::this_thread::sleep_for(1s);
  CHECK(alpha.stats().retired == retired);
  CHECK(retired == 2);
  beta.reset();
  REQUIRE(eventually([] { return told.load() == 1; }));
}

// A retired connection's peer that went meanwhile is found out when a
// message reaches for it: after heartbeat_timeout, the peer is lost and a
// pending ask ends with node_down, as on a live connection.
TEST_CASE("an ask through a retired connection to a peer that went ends with node_down") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  net::node_config alpha_config = config.alpha(), beta_config = config.beta();
  alpha_config.idle_after = beta_config.idle_after = 200ms;
  beta_config.heartbeat = 200ms;
  beta_config.heartbeat_timeout = 1s;
  auto alpha = std::make_unique<net::node>(alpha_system, alpha_config, carried{});
  alpha->publish("kv", tx::spawn(alpha_system, store(5), tx::mode::serialized));
  net::node beta{beta_system, beta_config, carried{}};
  const tx::actor_ref kv = beta.remote("alpha", "kv");
  REQUIRE(tx::ask<value>(beta_system, kv, 60s, get{"a"}).has_value());
  REQUIRE(eventually([&] { return beta.stats().retired >= 1; }));
  alpha.reset();
  CHECK(tx::ask<value>(beta_system, kv, 600s, get{"a"}).error() == tact::ask_error::node_down);
  CHECK(beta.stats().peers_lost == 1);
}
