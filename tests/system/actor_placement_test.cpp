#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <thread>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Placement as API: spawn_at and placement_scope put an actor on a worker's
// queues, on a given queue or beside another actor; where() says where an
// actor is; a placement the system cannot honour is refused before anything
// is made.
namespace {

struct ping : tact::message {};

// Records the thread that ran it, to show which worker held its queue.
struct probe : tact::actor {
  probe() = default;
  explicit probe(tact::actor_system& system) : tact::actor{system} {}
  std::thread::id ran_on;
  tact::allocation receive(ping&) {
    ran_on = std::this_thread::get_id();
    return Nodelete;
  }
};

// Made by spawn_at; its member is made inside the same placement.
struct pair_of : tact::actor {
  probe inner;
  tact::allocation receive(ping&) { return Nodelete; }
};

}  // namespace

TEST_CASE("an actor placed on a worker starts on one of that worker's queues") {
  // No stealing, so queues stay where they start.
  tact::actor_system system{{.workers = 2, .queues = 8, .steal = tact::steal_policy::none}};
  std::set<std::uint32_t> queues_of_worker_1;
  for (int i = 0; i < 8; ++i) {
    auto& p = system.spawn_at<probe>(tact::on_worker(1));
    const tact::location at = tact::where(p);
    CHECK(at.worker == 1);
    CHECK_FALSE(at.sponsored);
    queues_of_worker_1.insert(at.queue);
    p | tact::delete_msg;
  }
  CHECK(queues_of_worker_1.size() == 4);  // round robin over its four queues
  // Two actors on worker 0 and worker 1 run on two different threads.
  auto& on_0 = system.spawn_at<probe>(tact::on_worker(0));
  auto& on_1 = system.spawn_at<probe>(tact::on_worker(1));
  ping a;
  ping b;
  on_0 | a;
  on_1 | b;
  system.await_quiescence();
  CHECK(on_0.ran_on != on_1.ran_on);
  on_0 | tact::delete_msg;
  on_1 | tact::delete_msg;
  system.stop();
}

TEST_CASE("an actor placed next to another shares its queue, as does what its constructor makes") {
  tact::actor_system system{{.workers = 2}};
  auto& first = system.spawn_at<probe>(tact::on_queue(3));
  CHECK(tact::where(first).queue == 3);
  auto& beside = system.spawn_at<pair_of>(tact::next_to(first));
  CHECK(tact::where(beside).queue == 3);
  CHECK(tact::where(beside.inner).queue == 3);
  {
    tact::placement_scope scope{system, tact::next_to(beside)};
    probe local;
    CHECK(tact::where(local).queue == 3);
    local | tact::finished_msg;
    system.await_quiescence();
  }
  // Outside a scope the default applies again: round robin from queue 0.
  probe unplaced{system};
  CHECK(tact::where(unplaced).queue != tact::location::none);
  unplaced | tact::finished_msg;
  beside.inner | tact::finished_msg;
  beside | tact::delete_msg;
  first | tact::delete_msg;
  system.stop();
}

TEST_CASE("a finished actor has no location") {
  tact::actor_system system{{.workers = 1}};
  probe p{system};
  p | tact::finished_msg;
  system.await_quiescence();
  const tact::location at = tact::where(p);
  CHECK(at.queue == tact::location::none);
  CHECK(at.worker == tact::location::none);
  CHECK_THROWS_AS(system.spawn_at<probe>(tact::next_to(p)), std::logic_error);
  system.stop();
}

TEST_CASE("a placement the system cannot honour is refused and makes nothing") {
  tact::actor_system system{{.workers = 2, .queues = 4}};
  tact::actor_system other{{.workers = 1}};
  probe elsewhere{other};
  CHECK_THROWS_AS(system.spawn_at<probe>(tact::on_worker(2)), std::invalid_argument);
  CHECK_THROWS_AS(system.spawn_at<probe>(tact::on_queue(4)), std::invalid_argument);
  CHECK_THROWS_AS(system.spawn_at<probe>(tact::next_to(elsewhere)), std::invalid_argument);
  CHECK_THROWS_AS((tact::placement_scope{system, tact::on_worker(7)}), std::invalid_argument);
  CHECK(system.stats().total.actors_created == 0);
  elsewhere | tact::finished_msg;
  other.stop();
  system.stop();
}

TEST_CASE("an actor placed next to a sponsored one is bound to the same sponsor") {
  tact::actor_system system{{.workers = 1, .sponsors = 1}};
  tact::sponsor here{system};
  auto& bound = here.spawn<probe>();
  auto& beside = system.spawn_at<probe>(tact::next_to(bound));
  const tact::location at = tact::where(beside);
  CHECK(at.sponsored);
  CHECK(at.queue == tact::where(bound).queue);
  CHECK(at.worker == tact::location::none);
  ping m;
  beside | m;
  here.run_pending();
  CHECK(beside.ran_on == std::this_thread::get_id());  // the sponsor's thread ran it
  beside | tact::delete_msg;
  bound | tact::delete_msg;
  here.run_pending();
  system.stop();
}

TEST_CASE("placed actors under stealing still get every message once, in order") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  tact::actor_system system{tact::test::configured({.workers = workers})};
  struct counter : tact::actor {
    tact::test::fifo_check fifo;
    tact::allocation receive(tact::test::sequenced& m) {
      fifo.accept(m);
      return Nodelete;
    }
  };
  const std::uint64_t per_actor = tact::test::scaled(5'000);
  std::vector<counter*> actors;
  for (std::uint32_t i = 0; i < 2 * workers; ++i)
    actors.push_back(&system.spawn_at<counter>(tact::on_worker(0)));  // all on one worker
  std::vector<std::vector<tact::test::sequenced>> messages(actors.size());
  for (std::size_t a = 0; a < actors.size(); ++a)
    for (std::uint64_t i = 0; i < per_actor; ++i) messages[a].emplace_back(0, i);
  for (std::uint64_t i = 0; i < per_actor; ++i)
    for (std::size_t a = 0; a < actors.size(); ++a) *actors[a] | messages[a][i];
  system.await_quiescence();
  for (counter* c : actors) {
    CHECK(c->fifo.received() == per_actor);
    CHECK(c->fifo.clean());
    *c | tact::delete_msg;
  }
  system.stop();
  CHECK(tact::test::conservation_of(system));
}
