#pragma once

#include <cstdint>
#include <functional>

#include <tact/config.hpp>

#include "executor/placement.hpp"
#include "topology/topology.hpp"

namespace tact::detail {

// The placement of `workers` workers that `config` asks for on this
// machine: victim groups for locality stealing, a pinning plan when
// pin_workers is set (one processing unit per core first, see
// topology::plan). The topology is read once per process, and only when a
// system needs it.
placement machine_placement(const system_config& config, std::uint32_t workers);

// The same on a given machine; `machine` may throw, as reading the real one
// can (then the placement says why, and has no groups and no binding).
placement machine_placement(const system_config& config, std::uint32_t workers,
                            const std::function<const topology&()>& machine);

}  // namespace tact::detail
