// Classic actors on nodes, as a user writes them: a classic actor
// published through a handle, reached through a handle to a local proxy,
// sent to and asked as a local one; its replies, its exceptions and its
// silence reach the asker on the other node; and an ask pending on a node
// that goes ends with node_down.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tact/net/node.hpp>
#include <tact/tact.hpp>

#include "support/net_nodes.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace net = tact::net;
using tact::test::eventually;
using tact::test::pair_config;
using tact::test::two_workers;

// Sent as tact::payload<numbered>.
struct numbered {
  std::uint32_t sender = 0;
  std::uint32_t seq = 0;
};
TACT_WIRE(numbered, "ctest.numbered", sender, seq);

struct value {
  std::int64_t v = 0;
};
TACT_WIRE(value, "ctest.value", v);

// Classic messages declared for the wire: a plain message and a request.
struct put : tact::message {
  std::string key;
  std::int64_t value = 0;
};
TACT_WIRE(put, "ctest.put", key, value);

struct get : tact::request<value> {
  std::string key;
};
TACT_WIRE(get, "ctest.get", key);

using carried = net::message_types<numbered, value, put, get>;

get get_of(std::string key) {
  get g;
  g.key = std::move(key);
  return g;
}

// A classic key-value store. A get for "throw" throws; one for "silent"
// is dropped unanswered; one for "keep" is kept, never answered.
struct store : tact::actor {
  explicit store(tact::actor_system& s) : actor{s} {}
  tact::allocation receive(put& m) {
    values[m.key] = m.value;
    return Nodelete;
  }
  tact::allocation receive(get& m) {
    if (m.key == "throw") throw std::runtime_error{"no such luck"};
    if (m.key == "silent") return Nodelete;
    if (m.key == "keep") {
      m.set_allocation(tact::allocation::Nodelete);  // ours now: never answered
      kept.emplace_back(&m);
      return Nodelete;
    }
    m.reply(value{values[m.key]});
    return Nodelete;
  }
  std::map<std::string, std::int64_t> values;
  std::vector<std::unique_ptr<get>> kept;
};

// Receives numbered payloads, and checks each sender's order.
struct sink : tact::actor {
  explicit sink(tact::actor_system& s) : actor{s} {}
  tact::allocation receive(tact::payload<numbered>& n) {
    if (n.seq != next[n.sender % 2]) ++out_of_order;
    next[n.sender % 2] = n.seq + 1;
    count.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
  std::uint32_t next[2] = {0, 0};
  std::uint32_t out_of_order = 0;
  std::atomic<std::uint64_t> count{0};
};

}  // namespace

TEST_CASE("a classic actor on another node receives what a handle sends, once each and in order") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  sink received{alpha_system};
  const std::uint32_t per_sender = static_cast<std::uint32_t>(tact::test::scaled(20'000));
  {
    net::node alpha{alpha_system, config.alpha(), carried{}};
    alpha.publish("sink", tact::handle<tact::payload<numbered>>{received});
    net::node beta{beta_system, config.beta(), carried{}};
    const auto remote = beta.remote<tact::payload<numbered>>("alpha", "sink");
    std::thread other{[&] {
      for (std::uint32_t i = 0; i < per_sender; ++i) tact::send_new(remote, numbered{1, i});
    }};
    for (std::uint32_t i = 0; i < per_sender; ++i) tact::send_new(remote, numbered{0, i});
    other.join();
    REQUIRE(eventually(
        [&] { return received.count.load(std::memory_order_acquire) == 2 * per_sender; }));
    alpha_system.await_quiescence();
    CHECK(received.out_of_order == 0);
    CHECK(alpha.stats().received == 2 * per_sender);
    CHECK(alpha.stats().malformed == 0);
  }
  received | tact::finished_msg;
  alpha_system.stop();
}

TEST_CASE("a classic ask across nodes gets the reply, the exception's text, or no_reply") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  store kv{alpha_system};
  {
    net::node alpha{alpha_system, config.alpha(), carried{}};
    alpha.publish("kv", tact::handle<put, get>{kv});
    net::node beta{beta_system, config.beta(), carried{}};
    const tact::handle<put, get> remote = beta.remote<put, get>("alpha", "kv");
    std::vector<put> puts(100);  // sent by reference: alive until received
    for (std::size_t i = 0; i < puts.size(); ++i) {
      puts[i].key = "a";
      puts[i].value = static_cast<std::int64_t>(i + 1);
      remote | puts[i];
    }
    // After the puts, sent before it by the same thread.
    const auto answer = tact::ask(remote, get_of("a"), 60s);
    REQUIRE(answer.has_value());
    CHECK(answer->v == 100);

    const auto thrown = tact::ask(remote, get_of("throw"), 60s);
    REQUIRE(thrown.error() == tact::ask_error::failed);
    try {
      std::rethrow_exception(thrown.exception());
    } catch (const std::runtime_error& e) {
      CHECK(std::string{e.what()} == "no such luck");
    }
    CHECK(tact::ask(remote, get_of("silent"), 60s).error() == tact::ask_error::no_reply);
    CHECK(tact::ask(remote, get_of("b"), 60s)->v == 0);
    beta_system.await_quiescence();
  }
  kv | tact::finished_msg;
  alpha_system.stop();
}

TEST_CASE("a classic ask pending on a node that ends fails with node_down") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  store kv{alpha_system};
  auto alpha = std::make_unique<net::node>(alpha_system, config.alpha(), carried{});
  alpha->publish("kv", tact::handle<put, get>{kv});
  net::node beta{beta_system, config.beta(), carried{}};
  const auto remote = beta.remote<get>("alpha", "kv");
  std::optional<tact::ask_error> kept;
  std::thread asker{[&] { kept = tact::ask(remote, get_of("keep"), 600s).error(); }};
  REQUIRE(eventually([&] { return alpha->stats().received == 1; }));
  alpha.reset();
  asker.join();
  CHECK(kept == tact::ask_error::node_down);
  // Until it is back, an ask is told at once.
  CHECK(tact::ask(remote, get_of("a"), 600s).error() == tact::ask_error::node_down);
  CHECK(beta.stats().undelivered >= 1);
  alpha_system.await_quiescence();
  kv | tact::finished_msg;
  alpha_system.stop();
}

TEST_CASE("a classic and a transactional actor exchange plain records across nodes") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  sink received{alpha_system};
  static std::atomic<std::uint32_t> tx_count{0};
  tx_count = 0;
  {
    net::node alpha{alpha_system, config.alpha(), carried{}};
    alpha.publish("sink", tact::handle<tact::payload<numbered>>{received});
    alpha.publish("tx-sink",
                  tx::spawn(alpha_system, {[](const numbered&) { tx_count.fetch_add(1); }}));
    net::node beta{beta_system, config.beta(), carried{}};
    // A transactional proxy to the classic sink, a classic one to the
    // transactional sink: a plain record is the same message to both.
    const tx::actor_ref to_classic = beta.remote("alpha", "sink");
    const auto to_tx = beta.remote<tact::payload<numbered>>("alpha", "tx-sink");
    for (std::uint32_t i = 0; i < 100; ++i) {
      tx::send(to_classic, numbered{0, i});
      tact::send_new(to_tx, numbered{0, i});
    }
    REQUIRE(eventually([&] { return received.count.load() == 100 && tx_count.load() == 100; }));
    alpha_system.await_quiescence();
    CHECK(received.out_of_order == 0);
  }
  received | tact::finished_msg;
  alpha_system.stop();
}

TEST_CASE("a node refuses a classic handle whose messages it does not carry") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  store kv{alpha_system};
  net::node alpha{alpha_system, config.alpha(), net::message_types<numbered, put>{}};
  // get, and its reply type, are not carried.
  CHECK_THROWS_AS(alpha.publish("kv", tact::handle<put, get>{kv}), std::invalid_argument);
  CHECK_THROWS_AS((alpha.remote<put, get>("beta", "kv")), std::invalid_argument);
  CHECK_THROWS_AS(alpha.remote<put>("nobody", "kv"), std::invalid_argument);
  alpha.publish("kv", tact::handle<put>{kv});
  kv | tact::finished_msg;
  alpha_system.stop();
}

namespace {

struct notice {
  std::string topic;
  std::uint32_t seq = 0;
};
TACT_WIRE(notice, "ctest.notice", topic, seq);

// A classic message with a handle inside: the subscriber's, which arrives
// on the other node as a handle to a proxy for it.
struct subscribe : tact::message {
  std::string topic;
  tact::handle<tact::payload<notice>> subscriber;
};
TACT_WIRE(subscribe, "ctest.subscribe", topic, subscriber);

using with_handles = net::message_types<notice, subscribe>;

// Sends each subscriber `count` notices.
struct publisher : tact::actor {
  publisher(tact::actor_system& s, std::uint32_t n) : actor{s}, count{n} {}
  tact::allocation receive(subscribe& m) {
    for (std::uint32_t i = 0; i < count; ++i) tact::send_new(m.subscriber, notice{m.topic, i});
    return Nodelete;
  }
  std::uint32_t count;
};

struct reader : tact::actor {
  explicit reader(tact::actor_system& s) : actor{s} {}
  tact::allocation receive(tact::payload<notice>& n) {
    auto& next = n.topic == "rain" ? rain : sun;
    if (n.seq != next) ++wrong;
    ++next;
    total.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
  std::uint32_t rain = 0, sun = 0, wrong = 0;
  std::atomic<std::uint32_t> total{0};
};

}  // namespace

TEST_CASE("a handle inside a classic message arrives as a working handle") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  publisher news{alpha_system, 1'000};
  reader r{beta_system};
  {
    net::node alpha{alpha_system, config.alpha(), with_handles{}};
    alpha.publish("news", tact::handle<subscribe>{news});
    net::node beta{beta_system, config.beta(), with_handles{}};
    const auto remote = beta.remote<subscribe>("alpha", "news");
    std::vector<subscribe> subscriptions(2);
    subscriptions[0].topic = "rain";
    subscriptions[1].topic = "sun";
    for (subscribe& s : subscriptions) {
      s.subscriber = r;
      remote | s;
    }
    REQUIRE(eventually([&] { return r.total.load(std::memory_order_acquire) == 2'000; }));
    beta_system.await_quiescence();
    CHECK(r.wrong == 0);
    CHECK(r.rain == 1'000);
    CHECK(r.sun == 1'000);
    CHECK(alpha.stats().malformed == 0);
  }
  news | tact::finished_msg;
  r | tact::finished_msg;
  alpha_system.stop();
  beta_system.stop();
}

// The receiving node cannot make a proxy for a handle whose messages it
// does not carry: the message is refused as malformed (before, making the
// proxy threw inside the decoder, which must not throw, and the process
// ended).
TEST_CASE("a handle whose messages the receiving node does not carry is refused, not fatal") {
  const pair_config config;
  tact::actor_system alpha_system{two_workers()};
  tact::actor_system beta_system{two_workers()};
  publisher news{alpha_system, 1};
  reader r{beta_system};
  {
    net::node alpha{alpha_system, config.alpha(), net::message_types<subscribe>{}};
    alpha.publish("news", tact::handle<subscribe>{news});
    net::node beta{beta_system, config.beta(), with_handles{}};
    subscribe s;
    s.topic = "rain";
    s.subscriber = r;
    beta.remote<subscribe>("alpha", "news") | s;
    REQUIRE(eventually([&] { return alpha.stats().malformed >= 1; }));
    CHECK(alpha.stats().malformed == 1);  // once: the link counts what the node refuses
    alpha_system.await_quiescence();
    CHECK(r.total.load() == 0);
  }
  news | tact::finished_msg;
  r | tact::finished_msg;
  alpha_system.stop();
  beta_system.stop();
}
