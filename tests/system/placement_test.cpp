// From a configuration to where workers run and whom they steal from:
// plans checked on synthetic machines, pinning checked on this one.
#include <catch2/catch.hpp>

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include <tact/tact.hpp>

#include "executor/executor.hpp"
#include "support/test_support.hpp"
#include "system/machine_placement.hpp"

using tact::steal_policy;
using tact::system_config;
using tact::detail::machine_placement;
using tact::detail::placement;
using tact::detail::topology;

namespace {
using groups = std::vector<std::vector<std::uint32_t>>;
}

TEST_CASE("without locality stealing or pinning the machine is not even read") {
  bool read = false;
  const placement p = machine_placement({.steal = steal_policy::random}, 8, [&]() -> const topology& {
    read = true;
    throw std::runtime_error{"not needed"};
  });
  CHECK_FALSE(read);
  CHECK(p.victim_groups.empty());
  CHECK_FALSE(p.bind_worker);
  CHECK(p.unavailable.empty());
}

TEST_CASE("locality groups on a two-package NUMA machine, nearest first") {
  const topology machine = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  auto same = [&]() -> const topology& { return machine; };

  // Eight workers fill NUMA node 0 (cores 0-3), then node 1 (cores 4-7).
  const placement eight = machine_placement({.steal = steal_policy::locality}, 8, same);
  REQUIRE(eight.victim_groups.size() == 8);
  CHECK(eight.victim_groups[0] == groups{{1, 2, 3}, {1, 2, 3, 4, 5, 6, 7}});
  CHECK(eight.victim_groups[5] == groups{{4, 6, 7}, {0, 1, 2, 3, 4, 6, 7}});
  CHECK_FALSE(eight.bind_worker);  // not asked to pin

  // Forty workers: all 16 cores, then their second threads, then around.
  const placement forty = machine_placement({.steal = steal_policy::locality}, 40, same);
  const groups& g = forty.victim_groups[0];
  REQUIRE(g.size() == 5);
  CHECK(g[0] == std::vector<std::uint32_t>{32});      // same PU (the plan wrapped around)
  CHECK(g[1] == std::vector<std::uint32_t>{16, 32});  // + its core's other thread
  CHECK(g[2].size() == 11);                           // + its NUMA node: 4 cores x 3 workers
  CHECK(g[3].size() == 23);                           // + its package: 8 cores x 3 workers
  CHECK(g[4].size() == 39);                           // everyone
  for (std::size_t i = 1; i < g.size(); ++i)
    for (std::uint32_t w : g[i - 1]) CHECK(std::count(g[i].begin(), g[i].end(), w) == 1);
}

TEST_CASE("pinning a synthetic machine is planned but cannot bind") {
  const topology machine = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  const placement p = machine_placement({.steal = steal_policy::random, .pin_workers = true}, 4,
                                        [&]() -> const topology& { return machine; });
  CHECK(p.victim_groups.empty());  // random stealing needs no groups
  REQUIRE(p.bind_worker);
  CHECK_FALSE(p.bind_worker(0));  // a synthetic machine is not this one
  CHECK(p.place_memory);          // four NUMA nodes: queues go to their worker's
}

TEST_CASE("a machine that cannot be read leaves random stealing, unbound workers and a reason") {
  const placement p =
      machine_placement({.steal = steal_policy::locality, .pin_workers = true}, 4,
                        []() -> const topology& { throw std::runtime_error{"no hwloc today"}; });
  CHECK(p.victim_groups.empty());
  CHECK_FALSE(p.bind_worker);
  CHECK_FALSE(p.place_memory);
  CHECK_THAT(p.unavailable, Catch::Contains("no hwloc today") && Catch::Contains("random"));
}

TEST_CASE("the executor says once that the machine is unknown or workers could not be pinned") {
  tact::test::diagnostics_log log;
  tact::actor_system host{{.workers = 1}};
  SECTION("unknown machine") {
    tact::detail::executor ex{{.workers = 4, .steal = steal_policy::locality,
                               .on_diagnostic = log.handler()},
                              host, [](std::uint32_t) {
                                placement p;
                                p.unavailable = "no topology";
                                return p;
                              }};
    ex.stop();
  }
  SECTION("pinning fails on every worker") {
    tact::detail::executor ex{{.workers = 4, .on_diagnostic = log.handler()}, host,
                              [](std::uint32_t) {
                                placement p;
                                p.bind_worker = [](std::uint32_t) { return false; };
                                return p;
                              }};
    ex.await_quiescence();  // every worker has started (and parked)
    ex.stop();
  }
  CHECK(log.count(tact::diagnostic_kind::topology_unavailable) == 1);
}

namespace {
struct where : tact::message {};

// Records the processing units its worker may run on (Catch2 assertions
// are for the test thread only).
struct probe : tact::actor {
  std::mutex* guard = nullptr;
  std::vector<std::set<int>>* seen = nullptr;
  tact::allocation receive(where&) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::set<int> cpus;  // left empty if the call fails
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.insert(c);
    std::lock_guard lock{*guard};
    seen->push_back(cpus);
    return Nodelete;
  }
};
}  // namespace

TEST_CASE("pinned workers each run on one processing unit of their own") {
  const topology machine = topology::this_machine();
  const std::uint32_t workers = std::min<std::uint32_t>(machine.cores(), 4);
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = workers,
                             .queues = workers,  // one actor per worker: queue i is worker i's
                             .steal = steal_policy::none,
                             .pin_workers = true,
                             .on_diagnostic = log.handler()}};
  std::mutex guard;
  std::vector<std::set<int>> seen;
  std::vector<probe> probes(workers);
  std::vector<where> asks(workers);
  for (std::uint32_t i = 0; i < workers; ++i) {
    probes[i].guard = &guard;
    probes[i].seen = &seen;
    probes[i] | asks[i];
  }
  system.await_quiescence();
  CHECK(log.count(tact::diagnostic_kind::topology_unavailable) == 0);
  REQUIRE(seen.size() == workers);
  std::set<int> used;
  for (const std::set<int>& cpus : seen) {
    CHECK(cpus.size() == 1);
    used.insert(cpus.begin(), cpus.end());
  }
  CHECK(used.size() == workers);  // one core each
  for (probe& p : probes) p | tact::finished_msg;
  system.stop();
}
