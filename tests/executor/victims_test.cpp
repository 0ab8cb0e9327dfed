#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "executor/victims.hpp"

using tact::steal_policy;
using tact::detail::victim_picker;

namespace {
auto no_times = [](std::uint32_t) { return std::int64_t{0}; };
}

TEST_CASE("random victims are every other worker, never the thief itself") {
  const std::uint32_t workers = GENERATE(2u, 3u, 8u);
  const std::uint32_t self = GENERATE(0u, 1u);
  victim_picker picker{steal_policy::random, self, workers, {}};
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::uint32_t v = picker.pick(no_times);
    REQUIRE(v != self);
    REQUIRE(v < workers);
    seen.insert(v);
  }
  CHECK(seen.size() == workers - 1);
}

TEST_CASE("the longest victim is the worker that tried to steal least recently") {
  const std::vector<std::int64_t> last_attempt{50, 10, 30, 5, 70};
  auto times = [&](std::uint32_t w) { return last_attempt[w]; };
  victim_picker from0{steal_policy::longest_victim, 0, 5, {}};
  CHECK(from0.pick(times) == 3);
  victim_picker from3{steal_policy::longest_victim, 3, 5, {}};
  CHECK(from3.pick(times) == 1);  // never itself, though its time is oldest
}

TEST_CASE("locality tries each group as often as it has members, widens, and restarts after a "
          "steal") {
  // Worker 0 of 8: g0 = its core sibling, g1 = its NUMA node, g2 = everyone.
  const std::vector<std::vector<std::uint32_t>> groups{
      {1}, {1, 2, 3}, {1, 2, 3, 4, 5, 6, 7}};
  victim_picker picker{steal_policy::locality, 0, 8, groups};
  auto in = [](const std::vector<std::uint32_t>& g, std::uint32_t v) {
    for (std::uint32_t m : g)
      if (m == v) return true;
    return false;
  };
  CHECK(picker.pick(no_times) == 1);  // g0: one attempt
  for (int i = 0; i < 3; ++i) CHECK(in(groups[1], picker.pick(no_times)));  // g1: three
  std::set<std::uint32_t> wide;
  for (int i = 0; i < 500; ++i) wide.insert(picker.pick(no_times));  // then g2 for good
  CHECK(wide.size() == 7);
  picker.stole();
  CHECK(picker.pick(no_times) == 1);  // back to g0
}

TEST_CASE("locality without groups picks like random") {
  victim_picker picker{steal_policy::locality, 2, 4, {}};
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 500; ++i) seen.insert(picker.pick(no_times));
  CHECK(seen == std::set<std::uint32_t>{0, 1, 3});
}
