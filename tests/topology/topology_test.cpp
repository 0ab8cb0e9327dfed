#include <catch2/catch.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "topology/topology.hpp"

using tact::detail::pu_place;
using tact::detail::topology;
using groups = std::vector<std::vector<std::uint32_t>>;

namespace {

// 64 cores: 4 packages of 2 NUMA nodes, each NUMA node one L3 of 8 two-thread cores.
constexpr const char* big_machine = "pack:4 numa:2 l3:1 core:8 pu:2";

// Workers [first, last] except `except`, ascending.
std::vector<std::uint32_t> range_except(std::uint32_t first, std::uint32_t last,
                                        std::uint32_t except) {
  std::vector<std::uint32_t> r;
  for (std::uint32_t w = first; w <= last; ++w) {
    if (w != except) r.push_back(w);
  }
  return r;
}

std::vector<std::uint32_t> concat(std::vector<std::uint32_t> a,
                                  const std::vector<std::uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

// The properties the executor relies on, for every worker: groups non-empty, each strictly inside
// the next, ascending, never the worker itself, the last one all other workers.
void check_nesting(const std::vector<groups>& all) {
  const auto workers = static_cast<std::uint32_t>(all.size());
  for (std::uint32_t w = 0; w < workers; ++w) {
    INFO("worker " << w);
    const groups& g = all[w];
    if (workers == 1) {
      CHECK(g.empty());
      continue;
    }
    REQUIRE(!g.empty());
    for (std::size_t i = 0; i < g.size(); ++i) {
      INFO("group " << i);
      CHECK(!g[i].empty());
      CHECK(std::is_sorted(g[i].begin(), g[i].end()));
      CHECK(std::adjacent_find(g[i].begin(), g[i].end()) == g[i].end());
      CHECK(!std::binary_search(g[i].begin(), g[i].end(), w));
      if (i + 1 < g.size()) {
        CHECK(g[i].size() < g[i + 1].size());
        CHECK(std::includes(g[i + 1].begin(), g[i + 1].end(), g[i].begin(), g[i].end()));
      }
    }
    CHECK(g.back() == range_except(0, workers - 1, w));
  }
}

// A 4-package machine (one NUMA node and 2 single-thread cores per package) whose SLIT-style
// latency matrix puts the packages on a ring 0-1-2-3-0: node 0 reaches 1 and 3 at 16 but 2 at
// 22. Written by hand, which hwloc 2.9 makes touchy: every object needs all four sets (it
// segfaults on one without complete_cpuset or complete_nodeset), and XML comments are out (its
// own parser rejects the file; with libxml, one before <distances2> silently drops the matrix).
constexpr const char* ring_xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0xff" complete_cpuset="0xff"
          nodeset="0xf" complete_nodeset="0xf">
    <object type="Package" os_index="0" cpuset="0x03" complete_cpuset="0x03"
            nodeset="0x1" complete_nodeset="0x1">
      <object type="NUMANode" os_index="0" cpuset="0x03" complete_cpuset="0x03"
              nodeset="0x1" complete_nodeset="0x1"/>
      <object type="Core" os_index="0" cpuset="0x01" complete_cpuset="0x01"
              nodeset="0x1" complete_nodeset="0x1">
        <object type="PU" os_index="0" cpuset="0x01" complete_cpuset="0x01"
                nodeset="0x1" complete_nodeset="0x1"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x02" complete_cpuset="0x02"
              nodeset="0x1" complete_nodeset="0x1">
        <object type="PU" os_index="1" cpuset="0x02" complete_cpuset="0x02"
                nodeset="0x1" complete_nodeset="0x1"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0c" complete_cpuset="0x0c"
            nodeset="0x2" complete_nodeset="0x2">
      <object type="NUMANode" os_index="1" cpuset="0x0c" complete_cpuset="0x0c"
              nodeset="0x2" complete_nodeset="0x2"/>
      <object type="Core" os_index="2" cpuset="0x04" complete_cpuset="0x04"
              nodeset="0x2" complete_nodeset="0x2">
        <object type="PU" os_index="2" cpuset="0x04" complete_cpuset="0x04"
                nodeset="0x2" complete_nodeset="0x2"/>
      </object>
      <object type="Core" os_index="3" cpuset="0x08" complete_cpuset="0x08"
              nodeset="0x2" complete_nodeset="0x2">
        <object type="PU" os_index="3" cpuset="0x08" complete_cpuset="0x08"
                nodeset="0x2" complete_nodeset="0x2"/>
      </object>
    </object>
    <object type="Package" os_index="2" cpuset="0x30" complete_cpuset="0x30"
            nodeset="0x4" complete_nodeset="0x4">
      <object type="NUMANode" os_index="2" cpuset="0x30" complete_cpuset="0x30"
              nodeset="0x4" complete_nodeset="0x4"/>
      <object type="Core" os_index="4" cpuset="0x10" complete_cpuset="0x10"
              nodeset="0x4" complete_nodeset="0x4">
        <object type="PU" os_index="4" cpuset="0x10" complete_cpuset="0x10"
                nodeset="0x4" complete_nodeset="0x4"/>
      </object>
      <object type="Core" os_index="5" cpuset="0x20" complete_cpuset="0x20"
              nodeset="0x4" complete_nodeset="0x4">
        <object type="PU" os_index="5" cpuset="0x20" complete_cpuset="0x20"
                nodeset="0x4" complete_nodeset="0x4"/>
      </object>
    </object>
    <object type="Package" os_index="3" cpuset="0xc0" complete_cpuset="0xc0"
            nodeset="0x8" complete_nodeset="0x8">
      <object type="NUMANode" os_index="3" cpuset="0xc0" complete_cpuset="0xc0"
              nodeset="0x8" complete_nodeset="0x8"/>
      <object type="Core" os_index="6" cpuset="0x40" complete_cpuset="0x40"
              nodeset="0x8" complete_nodeset="0x8">
        <object type="PU" os_index="6" cpuset="0x40" complete_cpuset="0x40"
                nodeset="0x8" complete_nodeset="0x8"/>
      </object>
      <object type="Core" os_index="7" cpuset="0x80" complete_cpuset="0x80"
              nodeset="0x8" complete_nodeset="0x8">
        <object type="PU" os_index="7" cpuset="0x80" complete_cpuset="0x80"
                nodeset="0x8" complete_nodeset="0x8"/>
      </object>
    </object>
  </object>
  <distances2 type="NUMANode" nbobjs="4" kind="5" name="NUMALatency" indexing="os">
    <indexes length="7">0 1 2 3</indexes>
    <u64values length="11">10 16 22 16</u64values>
    <u64values length="11">16 10 16 22</u64values>
    <u64values length="11">22 16 10 16</u64values>
    <u64values length="11">16 22 16 10</u64values>
  </distances2>
</topology>
)";

// Loads ring_xml through a file, as topology::xml reads files.
topology ring_machine() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tact-topology-ring-" + std::to_string(::getpid()) + ".xml");
  std::ofstream(path) << ring_xml;
  struct remover {
    std::filesystem::path p;
    ~remover() { std::filesystem::remove(p); }
  } cleanup{path};
  return topology::xml(path.string());
}

// The OS CPUs the calling thread may run on, none if the OS does not say (no Catch2 assertion
// here: it runs on threads of its own).
std::set<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::set<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.insert(cpu);
  }
  return cpus;
}

}  // namespace

TEST_CASE("synthetic topologies count their packages, NUMA nodes, cores and PUs") {
  struct expected {
    const char* description;
    std::uint32_t packages, numa_nodes, cores, pus;
  };
  const auto e = GENERATE(values<expected>({
      {"pack:2 numa:2 core:4 pu:2", 2, 4, 16, 32},
      {big_machine, 4, 8, 64, 128},
      {"pack:1 core:2 pu:1", 1, 1, 2, 2},
      {"numa:2 pack:2 core:1 pu:1", 4, 2, 4, 4},
      {"pu:4", 0, 1, 4, 4},  // no cores known: each PU counts as one
  }));
  INFO(e.description);
  const topology t = topology::synthetic(e.description);
  CHECK(t.packages() == e.packages);
  CHECK(t.numa_nodes() == e.numa_nodes);
  CHECK(t.cores() == e.cores);
  CHECK(t.pus() == e.pus);
  CHECK_FALSE(t.is_this_system());
}

TEST_CASE("describe() gives the counts on one line") {
  CHECK(topology::synthetic("pack:1 core:2 pu:1").describe() ==
        "1 package, 1 NUMA node, 2 cores, 2 PUs");
  CHECK(topology::synthetic("pack:2 numa:2 core:4 pu:2").describe() ==
        "2 packages, 4 NUMA nodes, 16 cores, 32 PUs");
}

TEST_CASE("a description or file hwloc rejects throws, naming it") {
  CHECK_THROWS_AS(topology::synthetic("pack:two core:4"), std::invalid_argument);
  CHECK_THROWS_WITH(topology::synthetic("pack:two core:4"), Catch::Contains("pack:two core:4"));
  CHECK_THROWS_AS(topology::xml("/nonexistent/tact-topology.xml"), std::runtime_error);
}

TEST_CASE("this machine loads, with at least one PU, and is this system") {
  const topology t = topology::this_machine();
  CHECK(t.pus() >= 1);
  CHECK(t.cores() >= 1);
  CHECK(t.cores() <= t.pus());
  CHECK(t.numa_nodes() >= 1);
  CHECK(t.is_this_system());
  // One worker per PU uses each PU once, and among them every CPU this thread may run on.
  std::set<int> planned;
  for (const pu_place& p : t.plan(t.pus())) planned.insert(static_cast<int>(p.os_index));
  CHECK(planned.size() == t.pus());
  const std::set<int> allowed = allowed_cpus();
  REQUIRE(!allowed.empty());
  CHECK(std::includes(planned.begin(), planned.end(), allowed.begin(), allowed.end()));
}

TEST_CASE("a moved topology keeps working") {
  topology t = topology::synthetic("pack:1 core:2 pu:1");
  topology moved = std::move(t);
  CHECK(moved.pus() == 2);
  t = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  CHECK(t.pus() == 32);
}

TEST_CASE("the plan puts one worker per core first, in order, then second threads, then wraps") {
  const topology t = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  const std::vector<pu_place> plan = t.plan(40);
  REQUIRE(plan.size() == 40);
  for (std::uint32_t w = 0; w < 16; ++w) {
    INFO("worker " << w);
    CHECK(plan[w].core == w);
    CHECK(plan[w].pu == 2 * w);  // a core's first thread
    CHECK(plan[w].numa_node == static_cast<std::int32_t>(w / 4));
    CHECK(plan[w + 16].core == w);
    CHECK(plan[w + 16].pu == 2 * w + 1);  // the same core's second thread
    CHECK(plan[w + 16].numa_node == plan[w].numa_node);
  }
  for (std::uint32_t w = 32; w < 40; ++w) CHECK(plan[w] == plan[w - 32]);  // around again
}

TEST_CASE("8 workers on 2x2 NUMA nodes fill NUMA node 0 before node 1, one per core") {
  const std::vector<pu_place> plan = topology::synthetic("pack:2 numa:2 core:4 pu:2").plan(8);
  std::set<std::uint32_t> cores;
  for (std::uint32_t w = 0; w < 8; ++w) {
    CHECK(plan[w].numa_node == (w < 4 ? 0 : 1));
    cores.insert(plan[w].core);
  }
  CHECK(cores.size() == 8);
}

TEST_CASE("the plan is deterministic and a shorter plan is a prefix of a longer one") {
  const topology t = topology::synthetic(big_machine);
  const std::vector<pu_place> full = t.plan(300);
  CHECK(t.plan(300) == full);
  const std::vector<pu_place> part = t.plan(70);
  CHECK(std::equal(part.begin(), part.end(), full.begin()));
  CHECK(t.plan(0).empty());
  // No two of the first 64 workers share a core.
  std::set<std::uint32_t> cores;
  for (std::uint32_t w = 0; w < 64; ++w) cores.insert(full[w].core);
  CHECK(cores.size() == 64);
}

TEST_CASE("the plan reports the OS's CPU numbers, which need not follow logical order") {
  // Like Linux on many Intel machines: a core's hyperthreads are CPUs n and n + cores.
  const topology t = topology::synthetic("core:2 pu:2(indexes=0,2,1,3)");
  const std::vector<pu_place> plan = t.plan(4);
  CHECK(plan[0] == pu_place{0, 0, 0, 0});
  CHECK(plan[1] == pu_place{2, 1, 1, 0});
  CHECK(plan[2] == pu_place{1, 2, 0, 0});
  CHECK(plan[3] == pu_place{3, 3, 1, 0});
}

TEST_CASE("distance grows: same PU < same core < same NUMA node < same package < other package") {
  const topology t = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  // PUs 0-1 core 0; 0-7 NUMA node 0; 0-15 package 0.
  CHECK(t.distance(0, 0).levels == 0);
  CHECK(t.distance(0, 0) < t.distance(0, 1));
  CHECK(t.distance(0, 1) < t.distance(0, 2));
  CHECK(t.distance(0, 2) == t.distance(0, 7));
  CHECK(t.distance(0, 7) < t.distance(0, 8));
  CHECK(t.distance(0, 8) == t.distance(0, 15));
  CHECK(t.distance(0, 15) < t.distance(0, 16));
  CHECK(t.distance(0, 16) == t.distance(0, 31));
  CHECK(t.distance(31, 0) == t.distance(0, 31));
  CHECK(t.distance(0, 31).numa_latency == 0);  // synthetic: no matrix
  CHECK_THROWS_AS(t.distance(0, 32), std::out_of_range);

  // With caches: PUs 0-1 core 0; 0-3 L2 0; 0-7 L3 0 (all of package 0).
  const topology cached = topology::synthetic("pack:2 l3:1 l2:2 core:2 pu:2");
  CHECK(cached.distance(0, 1) < cached.distance(0, 2));
  CHECK(cached.distance(0, 2) < cached.distance(0, 4));
  CHECK(cached.distance(0, 4) < cached.distance(0, 8));
}

TEST_CASE("victim groups on 64 cores, one worker per core: L3/NUMA node, package, machine") {
  const topology t = topology::synthetic(big_machine);
  const std::vector<groups> g = t.victim_groups(t.plan(64));
  REQUIRE(g.size() == 64);
  CHECK(g[0] == groups{range_except(1, 7, 0), range_except(1, 15, 0), range_except(1, 63, 0)});
  CHECK(g[9] == groups{range_except(8, 15, 9), range_except(0, 15, 9), range_except(0, 63, 9)});
  CHECK(g[63] ==
        groups{range_except(56, 62, 63), range_except(48, 62, 63), range_except(0, 62, 63)});
  check_nesting(g);
}

TEST_CASE("victim groups on 64 cores, two workers per core: the core's other thread first") {
  const topology t = topology::synthetic(big_machine);
  const std::vector<groups> g = t.victim_groups(t.plan(128));
  // Worker 0: PU 0 of core 0; worker 64: PU 1 of core 0; workers 0-7 and 64-71 share an L3.
  CHECK(g[0] == groups{{64},
                       concat(range_except(1, 7, 0), range_except(64, 71, 0)),
                       concat(range_except(1, 15, 0), range_except(64, 79, 0)),
                       range_except(1, 127, 0)});
  check_nesting(g);
}

TEST_CASE("oversubscribed: workers sharing a PU are each other's nearest group") {
  const topology t = topology::synthetic(big_machine);
  const std::vector<pu_place> plan = t.plan(130);  // 128 PUs: workers 128, 129 wrap
  REQUIRE(plan[128] == plan[0]);
  REQUIRE(plan[129] == plan[1]);
  const std::vector<groups> g = t.victim_groups(plan);
  CHECK(g[0].front() == std::vector<std::uint32_t>{128});
  CHECK(g[128].front() == std::vector<std::uint32_t>{0});
  CHECK(g[1].front() == std::vector<std::uint32_t>{129});
  CHECK(g[1][1] == std::vector<std::uint32_t>{65, 129});  // then the core's other thread
  check_nesting(g);
  check_nesting(t.victim_groups(t.plan(300)));
}

TEST_CASE("victim groups on small plans") {
  const topology t = topology::synthetic("pack:2 numa:2 core:4 pu:2");
  CHECK(t.victim_groups({}).empty());
  CHECK(t.victim_groups(t.plan(1)) == std::vector<groups>{groups{}});
  const std::vector<groups> two = t.victim_groups(t.plan(2));
  CHECK(two == std::vector<groups>{groups{{1}}, groups{{0}}});
  check_nesting(t.victim_groups(t.plan(5)));
  CHECK_THROWS_AS(t.victim_groups({pu_place{99, 99, 0, 0}, pu_place{0, 0, 0, 0}}),
                  std::out_of_range);
}

TEST_CASE("a NUMA latency matrix orders packages the tree cannot tell apart") {
  const topology t = ring_machine();
  REQUIRE(t.packages() == 4);
  REQUIRE(t.numa_nodes() == 4);
  REQUIRE(t.pus() == 8);
  CHECK_FALSE(t.is_this_system());
  // PUs 2k and 2k+1 are on package k. Neighbours 1 and 3 are nearer than the opposite 2.
  CHECK(t.distance(0, 1) < t.distance(0, 2));
  CHECK(t.distance(0, 2) == t.distance(0, 6));
  CHECK(t.distance(0, 2) < t.distance(0, 4));
  CHECK(t.distance(0, 2).numa_latency == 16);
  CHECK(t.distance(0, 4).numa_latency == 22);
  CHECK(t.distance(2, 4) < t.distance(2, 6));  // from package 1, package 3 is opposite
  const std::vector<groups> g = t.victim_groups(t.plan(8));
  CHECK(g[0] == groups{{1}, {1, 2, 3, 6, 7}, range_except(1, 7, 0)});
  CHECK(g[2] == groups{{3}, {0, 1, 3, 4, 5}, range_except(0, 7, 2)});
  check_nesting(g);

  // The same tree without a matrix puts all other packages in one group.
  const topology flat = topology::synthetic("pack:4 [numa] core:2 pu:1");
  REQUIRE(flat.numa_nodes() == 4);
  CHECK(flat.distance(0, 2) == flat.distance(0, 4));
  CHECK(flat.victim_groups(flat.plan(8))[0] == groups{{1}, range_except(1, 7, 0)});
}

TEST_CASE("topologies of other machines cannot bind") {
  const topology t =
      topology::synthetic(GENERATE("pack:2 numa:2 core:4 pu:2", "pack:1 core:2 pu:1"));
  std::vector<char> block(1 << 16);
  CHECK_FALSE(t.bind_thread(t.plan(1)[0]));
  CHECK_FALSE(t.bind_memory(block.data(), block.size(), 0));
  const topology ring = ring_machine();
  CHECK_FALSE(ring.bind_thread(ring.plan(1)[0]));
  CHECK_FALSE(ring.bind_memory(block.data(), block.size(), 1));
}

TEST_CASE("on this machine a thread binds to its planned PU and memory to its NUMA node") {
  const topology t = topology::this_machine();
  const pu_place first = t.plan(1)[0];
  bool bound = false;
  std::set<int> cpus;
  // A thread of its own, so that the test's affinity stays as it was.
  std::thread([&] {
    bound = t.bind_thread(first);
    cpus = allowed_cpus();
  }).join();
  CHECK(bound);
  CHECK(cpus == std::set<int>{static_cast<int>(first.os_index)});

  std::vector<char> block(1 << 20);
  CHECK(t.bind_memory(block.data(), block.size(), first.numa_node));
  CHECK_FALSE(t.bind_memory(block.data(), block.size(), -1));
  CHECK_FALSE(t.bind_memory(block.data(), block.size(), static_cast<std::int32_t>(t.numa_nodes())));
  CHECK_FALSE(t.bind_thread(pu_place{t.pus(), 0, 0, 0}));
}
