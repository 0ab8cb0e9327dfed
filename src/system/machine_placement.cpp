#include "system/machine_placement.hpp"

#include <exception>
#include <memory>
#include <string>

namespace tact::detail {
namespace {

// This machine's topology, read on first use and kept for the process.
const topology& this_machine() {
  static const topology machine = topology::this_machine();
  return machine;
}

}  // namespace

placement machine_placement(const system_config& config, std::uint32_t workers) {
  return machine_placement(config, workers, this_machine);
}

placement machine_placement(const system_config& config, std::uint32_t workers,
                            const std::function<const topology&()>& machine) {
  const bool locality = config.steal == steal_policy::locality && workers > 1;
  if (!locality && !config.pin_workers) return {};
  const topology* shape = nullptr;
  try {
    shape = &machine();
  } catch (const std::exception& e) {
    placement unknown;
    unknown.unavailable = std::string{"could not read the machine's topology ("} + e.what() +
                          "); workers run unpinned and steal from random victims";
    return unknown;
  }
  auto plan = std::make_shared<const std::vector<pu_place>>(shape->plan(workers));
  placement result;
  if (locality) result.victim_groups = shape->victim_groups(*plan);
  if (config.pin_workers) {
    result.bind_worker = [shape, plan](std::uint32_t w) { return shape->bind_thread((*plan)[w]); };
    if (shape->numa_nodes() > 1)
      result.place_memory = [shape, plan](std::uint32_t w, const void* begin, std::size_t bytes) {
        shape->bind_memory(begin, bytes, (*plan)[w].numa_node);
      };
  }
  return result;
}

}  // namespace tact::detail
