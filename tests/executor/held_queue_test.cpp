#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "executor/held_queue.hpp"

// A held queue's busy actors: many of one queue's actors may wait at once,
// so they are found through an index, which every change keeps in step.
TEST_CASE("a held queue finds each busy actor, however many, as they come and go") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  INFO("seed " << seed);
  std::mt19937_64 random{seed};
  tact::detail::held_queue h{4};
  std::vector<int> actors(500);
  std::vector<const void*> busy;
  for (int round = 0; round < 4000; ++round) {
    const void* a = &actors[random() % actors.size()];
    if (h.find(a) == nullptr) {
      h.make_busy(a);
      busy.push_back(a);
    } else {
      REQUIRE(h.find(a)->target == a);
      h.erase(a);
      busy.erase(std::find(busy.begin(), busy.end(), a));
    }
    REQUIRE(h.busy.size() == busy.size());
  }
  for (const void* a : busy) {
    REQUIRE(h.find(a) != nullptr);
    CHECK(h.find(a)->target == a);
  }
  for (const int& a : actors)
    if (std::find(busy.begin(), busy.end(), &a) == busy.end()) CHECK(h.find(&a) == nullptr);
}
