#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tact::detail {

// How the workers sit on the machine, in the executor's terms: whom each
// one steals from first, how each binds its thread, where each one's
// queues live. The system layer derives it from the hardware topology
// (src/system/machine_placement.hpp); the executor knows nothing of hwloc.
// A default placement is a machine with no known shape: random stealing,
// unbound threads, memory wherever the allocator puts it.
struct placement {
  // Per worker, nested victim groups, nearest first (steal_policy::locality).
  std::vector<std::vector<std::vector<std::uint32_t>>> victim_groups;
  // Called first thing on worker w's thread: binds it to its processing
  // unit (and its memory to the unit's NUMA node). False if that failed.
  std::function<bool(std::uint32_t worker)> bind_worker;
  // Set on machines with several NUMA nodes: moves [begin, begin + bytes),
  // the headers of worker w's queues, to w's node.
  std::function<void(std::uint32_t worker, const void* begin, std::size_t bytes)> place_memory;
  // Why the machine's shape is unknown, when it should have been known
  // (locality stealing or pinning was asked for); said once.
  std::string unavailable;
};

}  // namespace tact::detail
