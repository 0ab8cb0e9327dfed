#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>
#include <string>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"
#include "transactional/tx_support.hpp"

namespace {

using tact::test::record;
using tact::test::recorder;
namespace tx = tact::tx;

using tact::test::counter;
using tact::test::get;
using tact::test::increment;

}  // namespace

TEST_CASE("a handler takes the message's elements as arguments; the first match wins") {
  tact::actor_system system{{.workers = 2}};
  record<std::string> seen;
  const tx::actor_ref out = tx::spawn(system, recorder(seen));
  const tx::actor_ref a = tx::spawn(
      system, {[out](int i, const std::string& s) { tx::send(out, s + std::to_string(i)); },
               [out](int) { tx::send(out, std::string{"int"}); },
               [out](int, const std::string&) { tx::send(out, std::string{"never"}); }});
  tx::send(a, 7, std::string{"x"});
  tx::send(a, 8);
  system.await_quiescence();
  auto values = seen.values();
  std::sort(values.begin(), values.end());
  CHECK(values == std::vector<std::string>{"int", "x7"});
  CHECK(system.stats().total.tx_commits == 4);
}

TEST_CASE("a message no handler matches is dropped, counted and, with checks, reported") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  record<int> seen;
  const tx::actor_ref a = tx::spawn(system, recorder(seen));
  tx::send(a, std::string{"not an int"});
  tx::send(a, 1, 2);
  tx::send(a, 3);
  system.await_quiescence();
  CHECK(seen.values() == std::vector<int>{3});
  CHECK(system.stats().total.tx_unmatched == 2);
  CHECK(tact::test::conservation_of(system));  // unmatched messages were processed
  // Once silent even with checks on: a wrong element type left no trace
  // but a counter.
  const auto reports = log.of(tact::diagnostic_kind::unmatched_message);
  if constexpr (tact::build::checks) {
    REQUIRE(reports.size() == 2);
    const bool named = std::any_of(reports.begin(), reports.end(), [](const tact::diagnostic& d) {
      return d.text.find("(int, int)") != std::string::npos;
    });
    CHECK(named);
  } else {
    CHECK(reports.empty());
  }
}

TEST_CASE("a send to an empty reference is dropped and counted, inside a handler or not") {
  tact::actor_system system{{.workers = 2}};
  const tx::actor_ref nobody;
  tx::send(nobody, 1);
  const tx::actor_ref forwarder = tx::spawn(system, {[nobody](int i) { tx::send(nobody, i); }});
  tx::send(forwarder, 2);
  tx::actor_ref released = tx::spawn(system, {[](int) {}});
  released.reset();
  tx::send(released, 3);
  system.await_quiescence();
  const tact::worker_stats total = system.stats().total;
  CHECK(total.tx_dropped == 3);
  CHECK(total.messages_rejected == 3);  // refused at the send: never queued
  CHECK(total.tx_commits == 1);
  CHECK(tact::test::conservation_of(total));
}

TEST_CASE("a become takes effect for the actor's next messages; replies go to the customer") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system system{{.workers = workers}};
  record<int> replies;
  const tx::actor_ref customer = tx::spawn(system, recorder(replies));
  const tx::actor_ref c = tx::spawn(system, counter(0), tx::mode::serialized);
  for (int i = 0; i < 5; ++i) tx::send(c, increment{});
  system.await_quiescence();
  tx::send(c, customer, get{});
  system.await_quiescence();
  CHECK(replies.values() == std::vector<int>{5});
  CHECK(system.stats().total.tx_becomes == 5);
}

TEST_CASE("a handler creates actors and sends to itself and to them") {
  tact::actor_system system{{.workers = 2}};
  record<int> seen;
  const tx::actor_ref out = tx::spawn(system, recorder(seen));
  // Counts down from n, creating a doubler for each step that reports 2n.
  const tx::actor_ref a = tx::spawn(system, {[out](int n) {
                                      if (n == 0) return;
                                      const tx::actor_ref doubler =
                                          tx::create({[out](int k) { tx::send(out, 2 * k); }});
                                      tx::send(doubler, n);
                                      tx::send(tx::self(), n - 1);
                                    }});
  tx::send(a, 4);
  system.await_quiescence();
  auto values = seen.values();
  std::sort(values.begin(), values.end());
  CHECK(values == std::vector<int>{2, 4, 6, 8});
}

TEST_CASE("become, self and create need a handler (or a system)") {
  tact::actor_system system{{.workers = 1}};
  CHECK_THROWS_AS(tx::become({[](int) {}}), std::logic_error);
  CHECK_THROWS_AS(tx::self(), std::logic_error);
  CHECK_THROWS_AS(tx::create({[](int) {}}), std::logic_error);
}

TEST_CASE("references compare and hash by identity") {
  tact::actor_system system{{.workers = 1}};
  const tx::actor_ref a = tx::spawn(system, {[](int) {}});
  const tx::actor_ref b = tx::spawn(system, {[](int) {}});
  const tx::actor_ref a2 = a;
  CHECK(a == a2);
  CHECK_FALSE(a == b);
  CHECK(std::hash<tx::actor_ref>{}(a) == std::hash<tx::actor_ref>{}(a2));
  CHECK(static_cast<bool>(a));
  CHECK_FALSE(static_cast<bool>(tx::actor_ref{}));
}

namespace {

struct alignas(64) wide {
  unsigned char bytes[64];
};

struct job {
  tx::actor_ref next;
  int step;
};

}  // namespace

TEST_CASE("messages keep their elements' alignment, however large") {
  tact::actor_system system{{.workers = 2}};
  std::atomic<int> misaligned{0};
  std::atomic<int> received{0};
  const tx::actor_ref a = tx::spawn(system, {[&](const wide& w) {
                                      if (reinterpret_cast<std::uintptr_t>(&w) % alignof(wide) != 0)
                                        misaligned.fetch_add(1);
                                      received.fetch_add(1);
                                    }});
  for (int i = 0; i < 100; ++i) tx::send(a, wide{});
  system.await_quiescence();
  CHECK(received.load() == 100);
  CHECK(misaligned.load() == 0);
}

TEST_CASE("a send whose arguments move the target reference away still reaches it") {
  tact::actor_system system{{.workers = 1}};
  record<int> seen;
  const tx::actor_ref out = tx::spawn(system, recorder(seen));
  const tx::actor_ref relay =
      tx::spawn(system, {[out](const job& j) { tx::send(out, j.step); }});
  job j{relay, 7};
  tx::send(j.next, std::move(j));  // the target is read before the move
  system.await_quiescence();
  CHECK(seen.values() == std::vector<int>{7});
}

TEST_CASE("tx::self() stays valid in on_commit actions after a send to self") {
  tact::actor_system system{{.workers = 2}};
  std::atomic<int> empty{0};
  std::atomic<int> actions{0};
  const tx::actor_ref a = tx::spawn(system, {[&](int n) {
                                      if (n > 0) tx::send(tx::self(), n - 1);
                                      const tx::actor_ref& me = tx::self();
                                      tx::on_commit([&me, &empty, &actions] {
                                        if (!me) empty.fetch_add(1);
                                        actions.fetch_add(1);
                                      });
                                    }});
  tx::send(a, 99);
  system.await_quiescence();
  CHECK(actions.load() == 100);
  CHECK(empty.load() == 0);
}

TEST_CASE("a commit's sends reach an actor of another system, in send order") {
  // The receiver runs on its own system's one worker, so a parallel actor
  // still takes its messages one at a time, in queue order; the sender's
  // commits run on workers of another executor, which cannot queue there
  // as they queue at home.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr int last = 2'000;
  record<int> seen;
  tact::actor_system there{{.workers = 1}};
  const tx::actor_ref sink = tx::spawn(there, recorder(seen));
  {
    tact::actor_system here{{.workers = workers}};
    const tx::actor_ref countdown = tx::spawn(here, {[sink](int n) {
                                                tx::send(sink, n);
                                                if (n < last) tx::send(tx::self(), n + 1);
                                              }});
    tx::send(countdown, 1);
    here.await_quiescence();
    CHECK(here.stats().total.tx_commits == static_cast<std::uint64_t>(last));
  }
  there.await_quiescence();
  std::vector<int> expected(last);
  std::iota(expected.begin(), expected.end(), 1);
  CHECK(seen.values() == expected);
}

TEST_CASE("each dispatch is counted once, with the one way it ended, per worker and in total") {
  // The common commit (matched, no become, no action) is counted apart
  // from the others inside the engine; the statistics must not show it.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = workers,
                             .on_diagnostic = log.handler(),
                             .on_rollback = [](const tx::rollback&) {}}};
  std::atomic<int> actions{0};
  const tx::actor_ref sink = tx::spawn(system, {[](int) {}});
  // 0: a plain commit with one send; 1: two sends; 2: a become; 3: an
  // on_commit action; 4: a throw (rolled back); none matches a string.
  const auto each_way = [&actions, sink](int kind) {
    tx::send(sink, kind);
    if (kind == 1) tx::send(sink, kind);
    if (kind == 2) tx::become({[sink](int k) { tx::send(sink, k); }});
    if (kind == 3) tx::on_commit([&actions] { actions.fetch_add(1); });
    if (kind == 4) throw std::runtime_error{"rolled back"};
  };
  const tx::actor_ref a = tx::spawn(system, {each_way});
  const tx::actor_ref b = tx::spawn(system, {each_way}, tx::mode::serialized);
  for (const tx::actor_ref& to : {a, b}) {
    for (const int kind : {0, 1, 3, 4}) tx::send(to, kind);
    tx::send(to, std::string{"unmatched"});
  }
  system.await_quiescence();
  // The becomes, alone: no other message of a may race a's.
  tx::send(a, 2);
  tx::send(b, 2);
  system.await_quiescence();
  const tact::system_stats s = system.stats();
  // Each of a and b: 4 commits (one a become), 1 rollback, 1 unmatched, 5
  // sends committed. The sink: 10 commits.
  CHECK(s.total.tx_commits == 4 + 4 + 10);
  CHECK(s.total.tx_becomes == 2);
  CHECK(s.total.tx_rollbacks == 2);
  CHECK(s.total.tx_unmatched == 2);
  CHECK(s.total.tx_dispatches == s.total.tx_commits + s.total.tx_rollbacks + s.total.tx_unmatched);
  CHECK(actions.load() == 2);
  std::uint64_t dispatched = 0;
  std::uint64_t committed = 0;
  for (const tact::worker_stats& w : s.workers) {
    dispatched += w.tx_dispatches;
    committed += w.tx_commits;
  }
  CHECK(dispatched == s.total.tx_dispatches);
  CHECK(committed == s.total.tx_commits);
}

namespace {

// One end of a rally between two serialized actors: each ball it gets it
// sends back, until none are left; counts what it caught by becoming.
tx::behaviour rally_end(int caught, std::atomic<int>& total) {
  return {[caught, &total](const tx::actor_ref& other, int left) {
    tx::become(rally_end(caught + 1, total));
    total.fetch_add(1, std::memory_order_relaxed);
    if (left > 0) tx::send(other, tx::self(), left - 1);
  }};
}

}  // namespace

TEST_CASE("a rally between serialized actors on two queues of one worker runs where it is") {
  // One worker, two queues, one actor's home on each: the rally's hops
  // are claimed, then merged into the batch in hand (docs/design.md, "Kept
  // queues"), so an actor's message runs on the other actor's queue. Its
  // home queue is held by the same worker: the message runs there and
  // then, not forwarded home, which would merge it back into the same
  // batch, forever.
  tact::actor_system system{{.workers = 1, .queues = 2}};
  std::atomic<int> total{0};
  const tx::actor_ref a = tx::spawn(system, rally_end(0, total), tx::mode::serialized);
  const tx::actor_ref b = tx::spawn(system, rally_end(0, total), tx::mode::serialized);
  constexpr int hops = 10'000;
  tx::send(a, b, hops);
  system.await_quiescence();
  CHECK(total.load() == hops + 1);
  const tact::worker_stats s = system.stats().total;
  CHECK(s.tx_commits == hops + 1);
  CHECK(s.tx_dispatches == s.tx_commits);  // none was forwarded home
  CHECK(s.local_sends >= hops / 2);        // the rally merged
}

namespace {

struct asked : tact::request<int> {};

struct answering : tact::actor {
  tact::allocation receive(asked& q) {
    q.reply(1);
    return Nodelete;
  }
};

// One end of a rally between serialized actors whose on_commit action, at
// one hop, asks a classic actor and waits: the rally's batch, which holds
// the other end's messages, waits with it.
tx::behaviour asking_end(int caught, int ask_at, answering& helper, std::atomic<int>& total,
                         std::atomic<int>& answers) {
  return {[caught, ask_at, &helper, &total, &answers](const tx::actor_ref& other, int left) {
    tx::become(asking_end(caught + 1, ask_at, helper, total, answers));
    total.fetch_add(1, std::memory_order_relaxed);
    if (left > 0) tx::send(other, tx::self(), left - 1);
    if (caught == ask_at)
      tx::on_commit([&helper, &answers] {
        const tact::ask_result<int> a = tact::ask(helper, asked{}, std::chrono::seconds{60});
        if (a.has_value()) answers.fetch_add(*a, std::memory_order_relaxed);
      });
  }};
}

}  // namespace

TEST_CASE("a serialized actor whose home queue waits held with another's runs there") {
  // As above, and at its 100th hop one end's on_commit action waits for a
  // classic actor's answer: the batch it waits in holds the other end's
  // queue along with its own (docs/design.md, "Kept queues"), and the
  // other end's messages run from there. Sent home, they would come back
  // to the same held queue, forever.
  tact::actor_system system{{.workers = 1, .queues = 3}};
  auto& helper = system.spawn_at<answering>(tact::on_queue(2));
  std::atomic<int> total{0};
  std::atomic<int> answers{0};
  const tx::actor_ref a =
      tx::spawn(system, asking_end(0, 100, helper, total, answers), tx::mode::serialized);
  const tx::actor_ref b =
      tx::spawn(system, asking_end(0, -1, helper, total, answers), tx::mode::serialized);
  constexpr int hops = 1'000;
  tx::send(a, b, hops);
  system.await_quiescence();
  CHECK(total.load() == hops + 1);
  CHECK(answers.load() == 1);
  const tact::worker_stats s = system.stats().total;
  CHECK(s.suspensions == 1);
  CHECK(s.tx_dispatches == s.tx_commits);  // none was forwarded home
  helper | tact::delete_msg;
}
