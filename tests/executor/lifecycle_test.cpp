#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "support/test_support.hpp"

namespace {

struct token : tact::message {
  std::uint64_t hops_left = 0;
};

// A ring of actors passing one token around; the last hop deletes them all.
struct ring_node : tact::actor {
  ring_node* next = nullptr;
  std::atomic<std::uint64_t>* hops = nullptr;
  tact::allocation receive(token& t) {
    hops->fetch_add(1, std::memory_order_relaxed);
    if (t.hops_left == 0) return Nodelete;
    --t.hops_left;
    *next | t;
    return Nodelete;
  }
};

struct work : tact::message {};

// Works through a chain of messages to itself, then deletes itself.
struct chain : tact::actor {
  std::uint64_t left;
  bool* destroyed;
  work step;
  chain(std::uint64_t length, bool* destroyed_flag) : left{length}, destroyed{destroyed_flag} {}
  ~chain() override { *destroyed = true; }
  tact::allocation receive(work&) {
    if (left-- == 0) return Delete;
    *this | step;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a process can start and stop systems again and again") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t rounds = tact::test::scaled(20);  // 1,000 in the soak
  for (std::uint64_t round = 0; round < rounds; ++round) {
    std::atomic<std::uint64_t> hops{0};
    tact::actor_system system{{.workers = workers}};
    std::vector<ring_node*> ring;
    for (int i = 0; i < 50; ++i) ring.push_back(&system.spawn<ring_node>());
    for (std::size_t i = 0; i < ring.size(); ++i) {
      ring[i]->next = ring[(i + 1) % ring.size()];
      ring[i]->hops = &hops;
    }
    token t;
    t.hops_left = 1000;
    *ring[0] | t;
    system.await_quiescence();
    REQUIRE(hops.load() == 1001);
    for (ring_node* node : ring) *node | tact::delete_msg;
    system.stop();
    REQUIRE(system.stats().total.actors_finished == 50);
  }
}

TEST_CASE("stop waits until every actor has finished") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  bool destroyed = false;
  tact::actor_system system{{.workers = workers}};
  auto& c = system.spawn<chain>(tact::test::scaled(100'000), &destroyed);
  c | c.step;
  system.stop();  // returns only after the chain deleted itself
  CHECK(destroyed);
  CHECK(system.stopped());
}

TEST_CASE("await_quiescence and stop are refused inside a behaviour") {
  struct impatient : tact::actor {
    std::vector<std::string> refusals;
    tact::allocation receive(work&) {
      for (auto call : {&tact::actor_system::await_quiescence, &tact::actor_system::stop}) {
        try {
          (system().*call)();
        } catch (const std::logic_error& e) {
          refusals.emplace_back(e.what());
        }
      }
      return Finished;
    }
  };
  tact::actor_system system{{.workers = 2}};
  impatient a;
  work w;
  a | w;
  system.stop();
  REQUIRE(a.refusals.size() == 2);
  CHECK_THAT(a.refusals[0],
             Catch::Matchers::Contains("await_quiescence() called from a behaviour"));
  CHECK_THAT(a.refusals[1], Catch::Matchers::Contains("stop() called from a behaviour"));
}

TEST_CASE("stop reports actors that can never finish, and still waits for them") {
  struct stuck : tact::actor {
    tact::allocation receive(work&) { return Nodelete; }
  };
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  stuck a;
  work w;
  a | w;
  // The report reaches the thread in stop(); finishing the actor from the
  // handler is what lets stop() return.
  log.on_entry([&](const tact::diagnostic& d) {
    if (d.kind == tact::diagnostic_kind::idle_with_live_actors) a | tact::finished_msg;
  });
  system.stop();
  const auto reports = log.of(tact::diagnostic_kind::idle_with_live_actors);
  REQUIRE(reports.size() == 1);
  CHECK_THAT(reports[0].text, Catch::Matchers::Contains("waiting for 1 actor(s)"));
  CHECK(a.finished());
}

TEST_CASE("several systems run side by side, each with its own actors") {
  std::atomic<std::uint64_t> hops_a{0};
  std::atomic<std::uint64_t> hops_b{0};
  tact::actor_system a{{.workers = 2}};
  tact::actor_system b{{.workers = 3}};
  auto& x = a.spawn<ring_node>();
  auto& y = b.spawn<ring_node>();
  x.next = &x;
  x.hops = &hops_a;
  y.next = &y;
  y.hops = &hops_b;
  CHECK(&x.system() == &a);
  CHECK(&y.system() == &b);
  token tx;
  tx.hops_left = 500;
  token ty;
  ty.hops_left = 700;
  x | tx;
  y | ty;
  a.await_quiescence();
  b.await_quiescence();
  CHECK(hops_a.load() == 501);
  CHECK(hops_b.load() == 701);
  x | tact::delete_msg;
  y | tact::delete_msg;
}

TEST_CASE("statistics are summed per worker, and print one line per worker") {
  std::atomic<std::uint64_t> hops{0};
  tact::actor_system system{{.workers = 3}};
  auto& node = system.spawn<ring_node>();
  node.next = &node;
  node.hops = &hops;
  token t;
  t.hops_left = 99;
  node | t;
  system.await_quiescence();
  const tact::system_stats stats = system.stats();
  REQUIRE(stats.workers.size() == 3);
  tact::worker_stats sum;
  for (const tact::worker_stats& w : stats.workers) sum += w;
  CHECK(stats.total.messages_processed == 100);
  CHECK(sum.messages_processed == 100);
  CHECK(stats.total.messages_sent == 100);  // 99 from the actor, 1 from this thread
  CHECK(stats.total.actors_created == 1);
  CHECK(stats.total.gulps >= 1);
  CHECK(stats.total.average_gulp_size() ==
        static_cast<double>(stats.total.gulped_messages) / static_cast<double>(stats.total.gulps));
  std::ostringstream printed;
  printed << stats;
  CHECK_THAT(printed.str(), Catch::Matchers::StartsWith("total: actors created 1, finished 0; "
                                                        "messages sent 100") &&
                                Catch::Matchers::Contains("worker 2: "));
  node | tact::delete_msg;
}
