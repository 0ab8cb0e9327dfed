#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/test_support.hpp"
#include "support/token_ring.hpp"

// Snapshots, their differences and the gauges: a difference counts what
// happened between two snapshots, per worker; the gauges say what waits
// and who is parked at the moment of the snapshot.
namespace {

using namespace std::chrono_literals;

using tact::test::token;
using node = tact::test::ring_node;

// A ring of classic actors on the test's stack, finished before it goes.
struct ring {
  explicit ring(tact::actor_system& s) : system{s}, nodes(8) {
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i].next = &nodes[(i + 1) % nodes.size()];
  }
  ~ring() {
    for (node& n : nodes) n | tact::finished_msg;
    system.await_quiescence();
  }
  // Sends a token round for `hops` hops and waits until it has made them.
  void run(std::uint64_t hops) {
    token t;
    t.hops_left = hops;
    nodes[0] | t;
    system.await_quiescence();
  }
  tact::actor_system& system;
  std::vector<node> nodes;
};

std::uint64_t processed_by_workers(const tact::system_stats& s) {
  std::uint64_t n = 0;
  for (const tact::worker_stats& w : s.workers) n += w.messages_processed;
  return n;
}

struct go : tact::message {};
struct note : tact::message {};

// Holds its worker in the receive of `go` until released.
struct blocker : tact::actor {
  tact::allocation receive(go&) {
    entered.store(true);
    while (!released.load()) std::this_thread::sleep_for(100us);
    return Nodelete;
  }
  tact::allocation receive(note&) { return Nodelete; }
  std::atomic<bool> entered{false};
  std::atomic<bool> released{false};
};

struct question : tact::request<int> {};
struct answer_now : tact::message {};

// Keeps the question it is asked until told to answer it.
struct keeper : tact::actor {
  tact::allocation receive(question& q) {
    q.set_allocation(tact::allocation::Nodelete);  // ours until answered
    held = &q;
    return Nodelete;
  }
  tact::allocation receive(answer_now&) {
    held->reply(42);
    delete held;
    return Nodelete;
  }
  question* held = nullptr;
};

// Asks the keeper, and waits in its behaviour (suspended) for the answer.
struct asker : tact::actor {
  explicit asker(keeper& k) : keeper_{k} {}
  tact::allocation receive(go&) {
    answer = tact::ask(keeper_, question{}, 60s).value();
    return Nodelete;
  }
  keeper& keeper_;
  int answer = 0;
};

}  // namespace

TEST_CASE("a difference of two snapshots counts what happened between them, per worker") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{{.workers = workers}};
  ring r{system};
  r.run(1'000);
  const tact::system_stats before = system.stats();
  r.run(10'000);
  const tact::system_stats after = system.stats();
  const tact::system_stats d = after - before;

  REQUIRE(d.workers.size() == workers);
  CHECK(d.total.messages_processed == 10'001);  // the hops and the send from this thread
  CHECK(d.total.messages_sent == 10'001);
  CHECK(processed_by_workers(d) == 10'001);
  CHECK(d.total.actors_created == 0);  // the ring was made before
  for (std::uint32_t w = 0; w < workers; ++w)
    CHECK(d.workers[w].messages_processed ==
          after.workers[w].messages_processed - before.workers[w].messages_processed);
  // Over the time between the snapshots, with the later one's gauges.
  CHECK(d.since == before.taken);
  CHECK(d.taken == after.taken);
  // interval() is in seconds as a double: equal up to rounding (an exact
  // comparison failed for 994,264 ns, whose seconds do not convert back).
  CHECK(d.interval().count() ==
        Approx(std::chrono::duration<double>(after.taken - before.taken).count()));
  if (d.interval().count() > 0)
    CHECK(d.per_second(d.total.messages_processed) == Approx(10'001 / d.interval().count()));
  CHECK(d.queued == after.queued);
  CHECK(d.live_actors == 8);
}

TEST_CASE("differences from one snapshot subtract as the snapshots do") {
  tact::actor_system system{{.workers = 2}};
  ring r{system};
  const tact::system_stats s0 = system.stats();
  r.run(1'000);
  const tact::system_stats s1 = system.stats();
  r.run(2'000);
  const tact::system_stats s2 = system.stats();
  const tact::system_stats between = (s2 - s0) - (s1 - s0);
  CHECK(between.since == s1.taken);
  CHECK(between.taken == s2.taken);
  CHECK(between.total.messages_processed == 2'001);
  CHECK(between.total.messages_processed == (s2 - s1).total.messages_processed);
  for (std::size_t w = 0; w < between.workers.size(); ++w)
    CHECK(between.workers[w].gulps == (s2 - s1).workers[w].gulps);
}

TEST_CASE("a snapshot is subtracted only from a later one of the same system") {
  tact::actor_system one{{.workers = 2}};
  tact::actor_system other{{.workers = 2}};
  const tact::system_stats earlier = one.stats();
  const tact::system_stats later = one.stats();
  CHECK_NOTHROW(later - earlier);
  CHECK_THROWS_AS(earlier - later, std::invalid_argument);
  CHECK_THROWS_AS(later - other.stats(), std::invalid_argument);
  CHECK_THROWS_AS(later - tact::system_stats{}, std::invalid_argument);
}

// gulped_messages and local_sends split the envelopes run by how they came
// into a batch: taken from a mailbox by a gulp, or appended to the batch
// in progress. Each comes one way, once: a hop between kept queues and a
// batch cut at the budget and taken up again are not counted twice.
TEST_CASE("every envelope run came into a batch once: by a gulp or appended to one") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint32_t budget_us = GENERATE(100u, 1u);  // the default, and cuts
  CAPTURE(workers, budget_us);
  tact::actor_system system{
      {.workers = workers, .gulp_budget = std::chrono::microseconds{budget_us}}};
  ring r{system};
  // One token: a conversation, hopping between kept queues.
  r.run(10'000);
  // Many: full batches, cut at the budget.
  constexpr std::uint64_t tokens = 2'000, hops = 20;
  std::vector<token> round(tokens);
  for (token& t : round) {
    t.hops_left = hops;
    r.nodes[0] | t;
  }
  system.await_quiescence();
  const tact::worker_stats s = system.stats().total;
  REQUIRE(s.messages_processed == 10'001 + tokens * (hops + 1));
  CHECK(s.gulped_messages + s.local_sends == s.messages_processed);
}

TEST_CASE("the queued gauge counts the envelopes waiting behind a busy actor") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{{.workers = workers}};
  blocker b;
  go hold;
  b | hold;
  REQUIRE(tact::test::eventually([&] { return b.entered.load(); }));
  // The blocker's queue is being processed, so these wait in its mailbox.
  std::vector<note> notes(100);
  for (note& n : notes) b | n;

  const tact::system_stats busy = system.stats();
  std::uint64_t on_workers = 0;
  bool someone_runs = false;
  for (const tact::worker_load& w : busy.load) {
    on_workers += w.queued;
    someone_runs = someone_runs || !w.parked;
  }
  CHECK(busy.queued == 100);
  CHECK(on_workers == 100);
  CHECK(someone_runs);  // the blocker's worker, in its receive

  b.released.store(true);
  system.await_quiescence();
  const tact::system_stats idle = system.stats();
  CHECK(idle.queued == 0);
  for (const tact::worker_load& w : idle.load) CHECK(w.queued == 0);
  b | tact::finished_msg;
  system.await_quiescence();
}

TEST_CASE("the suspended gauge counts behaviours waiting in an ask") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system system{{.workers = workers}};
  keeper k;
  asker a{k};
  const tact::system_stats before = system.stats();
  go start;
  a | start;
  // The asker's behaviour waits until the keeper answers.
  REQUIRE(tact::test::eventually([&] { return system.stats().suspended == 1; }));
  std::uint64_t on_workers = 0;
  for (const tact::worker_load& w : system.stats().load) on_workers += w.suspended;
  CHECK(on_workers == 1);

  answer_now now;
  k | now;
  system.await_quiescence();
  const tact::system_stats d = system.stats() - before;
  CHECK(a.answer == 42);
  CHECK(d.suspended == 0);
  CHECK(d.total.suspensions == 1);
  CHECK(d.total.resumptions == 1);
  a | tact::finished_msg;
  k | tact::finished_msg;
  system.await_quiescence();
}
