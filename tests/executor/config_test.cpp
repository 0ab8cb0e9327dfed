#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

using Catch::Matchers::Contains;

TEST_CASE("a system with zero workers is refused with a message naming the setting") {
  REQUIRE_THROWS_MATCHES(
      tact::actor_system({.workers = 0}), std::invalid_argument,
      Catch::Matchers::Message("tact: system_config.workers is 0; ask for at least one worker, or "
                               "leave it unset for one per processing unit"));
}

TEST_CASE("a system with fewer queues than workers is refused, saying how many it needs") {
  REQUIRE_THROWS_WITH(tact::actor_system({.workers = 4, .queues = 3}),
                      Contains("system_config.queues is 3, fewer than the 4 workers") &&
                          Contains("at least 4 queues"));
}

TEST_CASE("a fiber stack below the minimum is refused, saying the smallest it takes") {
  REQUIRE_THROWS_WITH(tact::actor_system({.workers = 1, .fiber_stack_size = 4096}),
                      Contains("system_config.fiber_stack_size is 4096 bytes") &&
                          Contains("at least " + std::to_string(tact::defaults::fiber_stack_minimum)));
  tact::actor_system smallest{
      {.workers = 1, .fiber_stack_size = tact::defaults::fiber_stack_minimum}};
  CHECK(smallest.config().fiber_stack_size == tact::defaults::fiber_stack_minimum);
}

TEST_CASE("an unset queue count gives 16 queues per worker, or one for a single worker") {
  tact::actor_system three{{.workers = 3}};
  CHECK(three.workers() == 3);
  CHECK(three.queues() == 48);
  tact::actor_system one{{.workers = 1}};
  CHECK(one.queues() == 1);
  tact::actor_system exact{{.workers = 2, .queues = 2}};
  CHECK(exact.queues() == 2);
}

TEST_CASE("an unset worker count gives one worker per processing unit") {
  tact::actor_system system;
  CHECK(system.workers() == std::max(1u, std::thread::hardware_concurrency()));
}

namespace {
struct idle : tact::actor {
  struct never : tact::message {};
  tact::allocation receive(never&) { return Nodelete; }
};
}  // namespace

TEST_CASE("actors created by one thread get queues round robin over every queue") {
  tact::actor_system system{{.workers = 3, .queues = 7}};
  std::vector<idle*> actors;
  for (int i = 0; i < 7 * 5 + 3; ++i) actors.push_back(&system.spawn<idle>());
  std::vector<int> per_queue(7, 0);
  for (std::size_t i = 0; i < actors.size(); ++i) {
    const std::uint32_t queue = tact::detail::actor_access::queue_of(*actors[i]);
    REQUIRE(queue == (tact::detail::actor_access::queue_of(*actors[0]) + i) % 7);
    ++per_queue[queue];
  }
  for (int n : per_queue) CHECK((n == 5 || n == 6));
  for (idle* a : actors) *a | tact::delete_msg;
  system.stop();
  CHECK(system.stats().total.actors_finished == actors.size());
}

TEST_CASE("the library's version is the headers' version") {
  const tact::version_info v = tact::version();
  CHECK(v.major == TACT_VERSION_MAJOR);
  CHECK(v.minor == TACT_VERSION_MINOR);
  CHECK(v.patch == TACT_VERSION_PATCH);
  CHECK(std::string{v.text} == TACT_VERSION_STRING);
  CHECK(TACT_VERSION == v.major * 10000 + v.minor * 100 + v.patch);
}
