#include "topology/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace tact::detail {

namespace {

struct handle_deleter {
  void operator()(hwloc_topology_t t) const noexcept { hwloc_topology_destroy(t); }
};
// Owns an hwloc topology, destroyed with it.
using handle = std::unique_ptr<hwloc_topology, handle_deleter>;

// An exception message: what hwloc could not do, and why (hwloc reports failures in errno).
std::string failure(const std::string& action) {
  return "tact: hwloc could not " + action + ": " + std::generic_category().message(errno);
}

// Creates a topology, lets `configure` choose its source (returning hwloc's status; a failure
// there throws ConfigError), and loads it. `what` names the source in exception messages.
template <class ConfigError, class Configure>
handle load(const std::string& what, Configure configure) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error(failure("create a topology"));
  handle owned(raw);
  if (configure(raw) != 0) throw ConfigError(failure("set up " + what));
  if (hwloc_topology_load(raw) != 0) throw std::runtime_error(failure("load " + what));
  return owned;
}

std::uint32_t count(hwloc_topology_t t, hwloc_obj_type_t type) {
  return static_cast<std::uint32_t>(std::max(hwloc_get_nbobjs_by_type(t, type), 0));
}

// The logical index of the PU's core, or the PU's own when the machine reports no cores.
std::uint32_t core_of(hwloc_obj_t pu) {
  for (hwloc_obj_t o = pu->parent; o != nullptr; o = o->parent) {
    if (o->type == HWLOC_OBJ_CORE) return o->logical_index;
  }
  return pu->logical_index;
}

// The NUMA node nearest the PU: hwloc 2 attaches NUMA nodes as memory children of the smallest
// object containing their PUs (possibly behind memory-side caches), so the first one found going
// up from the PU is its local node.
std::int32_t numa_node_of(hwloc_obj_t pu) {
  for (hwloc_obj_t o = pu; o != nullptr; o = o->parent) {
    hwloc_obj_t memory = o->memory_first_child;
    while (memory != nullptr && memory->type != HWLOC_OBJ_NUMANODE) {
      memory = memory->memory_first_child;
    }
    if (memory != nullptr) return static_cast<std::int32_t>(memory->logical_index);
  }
  return -1;
}

// The machine's NUMA latency matrix indexed by logical node indices ([from * nodes + to]), or
// empty if it has none. Entries for nodes the matrix does not cover stay 0.
std::vector<std::uint64_t> numa_latencies(hwloc_topology_t t, std::uint32_t nodes) {
  unsigned found = 1;
  hwloc_distances_s* matrix = nullptr;
  if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &found, &matrix,
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      found == 0) {
    return {};
  }
  std::vector<std::uint64_t> latencies(std::size_t{nodes} * nodes, 0);
  for (unsigned from = 0; from < matrix->nbobjs; ++from) {
    for (unsigned to = 0; to < matrix->nbobjs; ++to) {
      latencies[std::size_t{matrix->objs[from]->logical_index} * nodes +
                matrix->objs[to]->logical_index] = matrix->values[from * matrix->nbobjs + to];
    }
  }
  hwloc_distances_release(t, matrix);
  return latencies;
}

// The order in which plan() hands out PUs: the first PU of every core (cores in logical order),
// then the second of every core that has one, and so on.
std::vector<std::uint32_t> placement_order(const std::vector<pu_place>& places) {
  std::vector<std::uint32_t> threads_seen;                     // per core, its PUs met so far
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;  // (thread rank, PU)
  for (const pu_place& p : places) {
    if (p.core >= threads_seen.size()) threads_seen.resize(p.core + 1, 0);
    keyed.emplace_back(threads_seen[p.core]++, p.pu);
  }
  // PUs are in logical order, so within a rank they are in core order already.
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint32_t> order;
  for (const auto& [rank, pu] : keyed) order.push_back(pu);
  return order;
}

// "1 core", "2 cores": for describe().
std::string counted(std::uint32_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

struct topology::impl {
  explicit impl(handle loaded)
      : hwloc(std::move(loaded)),
        packages(count(hwloc.get(), HWLOC_OBJ_PACKAGE)),
        numa_nodes(count(hwloc.get(), HWLOC_OBJ_NUMANODE)),
        cores(count(hwloc.get(), HWLOC_OBJ_CORE)),
        latencies(numa_latencies(hwloc.get(), numa_nodes)) {
    const std::uint32_t n = count(hwloc.get(), HWLOC_OBJ_PU);
    if (n == 0) throw std::runtime_error("tact: the hwloc topology has no PU");
    for (std::uint32_t i = 0; i < n; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(hwloc.get(), HWLOC_OBJ_PU, i);
      pus.push_back(pu);
      places.push_back({i, pu->os_index, core_of(pu), numa_node_of(pu)});
    }
    if (cores == 0) cores = n;
    order = placement_order(places);
  }

  // The latency from `from`'s NUMA node to `to`'s, 0 if unknown.
  std::uint64_t latency(const pu_place& from, const pu_place& to) const {
    if (latencies.empty() || from.numa_node < 0 || to.numa_node < 0) return 0;
    return latencies[static_cast<std::size_t>(from.numa_node) * numa_nodes +
                     static_cast<std::size_t>(to.numa_node)];
  }

  handle hwloc;
  std::uint32_t packages;
  std::uint32_t numa_nodes;
  std::uint32_t cores;
  std::vector<std::uint64_t> latencies;  // see numa_latencies()
  std::vector<hwloc_obj_t> pus;          // by logical index
  std::vector<pu_place> places;          // by logical index
  std::vector<std::uint32_t> order;      // see placement_order()
};

topology::topology(std::unique_ptr<impl> state) noexcept : state_(std::move(state)) {}
topology::topology(topology&&) noexcept = default;
topology& topology::operator=(topology&&) noexcept = default;
topology::~topology() = default;

topology topology::this_machine() {
  return topology(std::make_unique<impl>(
      load<std::runtime_error>("this machine's topology", [](hwloc_topology_t t) {
        return hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
      })));
}

topology topology::synthetic(const std::string& description) {
  return topology(std::make_unique<impl>(load<std::invalid_argument>(
      "synthetic topology \"" + description + "\"",
      [&](hwloc_topology_t t) { return hwloc_topology_set_synthetic(t, description.c_str()); })));
}

topology topology::xml(const std::string& path) {
  return topology(std::make_unique<impl>(load<std::runtime_error>(
      "XML topology " + path,
      [&](hwloc_topology_t t) { return hwloc_topology_set_xml(t, path.c_str()); })));
}

std::uint32_t topology::pus() const noexcept {
  return static_cast<std::uint32_t>(state_->pus.size());
}
std::uint32_t topology::cores() const noexcept { return state_->cores; }
std::uint32_t topology::packages() const noexcept { return state_->packages; }
std::uint32_t topology::numa_nodes() const noexcept { return state_->numa_nodes; }

bool topology::is_this_system() const noexcept {
  return hwloc_topology_is_thissystem(state_->hwloc.get()) != 0;
}

std::string topology::describe() const {
  return counted(packages(), "package") + ", " + counted(numa_nodes(), "NUMA node") + ", " +
         counted(cores(), "core") + ", " + counted(pus(), "PU");
}

std::vector<pu_place> topology::plan(std::uint32_t workers) const {
  std::vector<pu_place> placed;
  placed.reserve(workers);
  for (std::uint32_t w = 0; w < workers; ++w) {
    placed.push_back(state_->places[state_->order[w % state_->order.size()]]);
  }
  return placed;
}

pu_distance topology::distance(std::uint32_t pu_a, std::uint32_t pu_b) const {
  if (pu_a >= pus() || pu_b >= pus()) {
    throw std::out_of_range("tact: no PU " + std::to_string(std::max(pu_a, pu_b)) + " among " +
                            std::to_string(pus()));
  }
  hwloc_obj_t a = state_->pus[pu_a];
  hwloc_obj_t ancestor = hwloc_get_common_ancestor_obj(state_->hwloc.get(), a, state_->pus[pu_b]);
  return {static_cast<std::uint32_t>(a->depth - ancestor->depth),
          state_->latency(state_->places[pu_a], state_->places[pu_b])};
}

std::vector<std::vector<std::vector<std::uint32_t>>> topology::victim_groups(
    const std::vector<pu_place>& plan) const {
  const auto workers = static_cast<std::uint32_t>(plan.size());
  std::vector<std::vector<std::vector<std::uint32_t>>> groups(workers);
  for (std::uint32_t thief = 0; thief < workers; ++thief) {
    std::vector<pu_distance> to(workers);
    for (std::uint32_t victim = 0; victim < workers; ++victim) {
      to[victim] = distance(plan[thief].pu, plan[victim].pu);
    }
    std::vector<pu_distance> radii;  // the distinct distances to the others, ascending
    for (std::uint32_t victim = 0; victim < workers; ++victim) {
      if (victim != thief) radii.push_back(to[victim]);
    }
    std::sort(radii.begin(), radii.end());
    radii.erase(std::unique(radii.begin(), radii.end()), radii.end());
    for (const pu_distance& radius : radii) {
      std::vector<std::uint32_t>& group = groups[thief].emplace_back();
      for (std::uint32_t victim = 0; victim < workers; ++victim) {
        if (victim != thief && to[victim] <= radius) group.push_back(victim);
      }
    }
  }
  return groups;
}

bool topology::bind_thread(const pu_place& where) const noexcept {
  if (!is_this_system() || where.pu >= pus()) return false;
  hwloc_topology_t t = state_->hwloc.get();
  if (hwloc_set_cpubind(t, state_->pus[where.pu]->cpuset, HWLOC_CPUBIND_THREAD) != 0) return false;
  const std::int32_t node = state_->places[where.pu].numa_node;
  if (numa_nodes() <= 1 || node < 0) return true;
  hwloc_obj_t memory = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(node));
  return hwloc_set_membind(t, memory->nodeset, HWLOC_MEMBIND_BIND,
                           HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0;
}

bool topology::bind_memory(const void* begin, std::size_t bytes,
                           std::int32_t numa_node) const noexcept {
  if (!is_this_system() || numa_node < 0 || static_cast<std::uint32_t>(numa_node) >= numa_nodes()) {
    return false;
  }
  if (numa_nodes() == 1) return true;
  hwloc_topology_t t = state_->hwloc.get();
  hwloc_obj_t memory =
      hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(numa_node));
  return hwloc_set_area_membind(t, begin, bytes, memory->nodeset, HWLOC_MEMBIND_BIND,
                                HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) == 0;
}

}  // namespace tact::detail
