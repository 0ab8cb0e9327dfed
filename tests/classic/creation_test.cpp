#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>

#include <tact/tact.hpp>

namespace {

struct grow : tact::message {};

// Each node creates two children from inside its behaviour, sends them the
// message it received, and deletes itself; leaves count themselves.
struct node : tact::actor {
  node(int depth, std::atomic<int>& leaves, std::atomic<int>& deaths)
      : depth{depth}, leaves{&leaves}, deaths{&deaths} {}
  ~node() override { deaths->fetch_add(1, std::memory_order_relaxed); }
  int depth;
  std::atomic<int>* leaves;
  std::atomic<int>* deaths;
  grow message;

  tact::allocation receive(grow&) {
    if (depth == 0) {
      leaves->fetch_add(1, std::memory_order_relaxed);
      return Delete;
    }
    for (int child = 0; child < 2; ++child) {
      auto* n = new node{depth - 1, *leaves, *deaths};  // joins this behaviour's system
      *n | n->message;
    }
    return Delete;
  }
};

}  // namespace

TEST_CASE("actors create actors and send to them from inside a behaviour") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr int depth = 12;
  std::atomic<int> leaves{0};
  std::atomic<int> deaths{0};
  tact::actor_system system{{.workers = workers}};
  auto& root = system.spawn<node>(depth, leaves, deaths);
  root | root.message;
  system.stop();
  CHECK(leaves == 1 << depth);
  CHECK(deaths == (2 << depth) - 1);
  const tact::worker_stats total = system.stats().total;
  CHECK(total.actors_created == (2u << depth) - 1);
  CHECK(total.actors_finished == total.actors_created);
}

TEST_CASE("spawn joins its own system, even from a behaviour of another system") {
  struct child : tact::actor {
    tact::allocation receive(grow&) { return Delete; }
  };
  struct parent : tact::actor {
    explicit parent(tact::actor_system& other) : other{&other} {}
    tact::actor_system* other;
    child* made = nullptr;
    grow message;
    tact::allocation receive(grow&) {
      made = &other->spawn<child>();
      return Finished;
    }
  };
  tact::actor_system first{{.workers = 2}};
  tact::actor_system second{{.workers = 2}};
  parent p{second};
  CHECK(&p.system() == &first);  // the process default is the first system started
  p | p.message;
  first.stop();
  REQUIRE(p.made != nullptr);
  CHECK(&p.made->system() == &second);
  grow g;
  *p.made | g;
  second.stop();
}

TEST_CASE("an actor created with no running system is refused") {
  struct lonely : tact::actor {};
  REQUIRE_THROWS_WITH(lonely{}, Catch::Matchers::Contains("no running actor_system"));
}

TEST_CASE("an actor created on a stopped system is refused") {
  struct bound : tact::actor {
    explicit bound(tact::actor_system& s) : tact::actor{s} {}
  };
  tact::actor_system system{{.workers = 1}};
  system.stop();
  REQUIRE_THROWS_WITH(bound{system}, Catch::Matchers::Contains("has stopped"));
}
