#pragma once

// The body of both balance programs for tact (balance_one/, balance_multi/):
// they differ only in which workers are loaded, which `run` decides.
#include <cstdint>
#include <exception>

#include <tact/tact.hpp>

#include "suite.hpp"
#include "workloads/balance.hpp"

namespace suite {

using balance_run = tact::bench::balance_result (*)(tact::actor_system&,
                                                    const tact::bench::balance_params&);

inline int balance_main(int argc, char** argv, const char* bench, balance_run run) {
  options o{argc, argv};
  const tact::bench::balance_params params{
      .actors_per_loaded_worker = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
      .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
      .rounds = static_cast<std::uint32_t>(o.param("rounds", 40, 5)),
      .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};

  tact::actor_system system{{.workers = o.threads()}};
  tact::bench::balance_result result;
  double secs = 0;
  try {
    secs = seconds([&] { result = run(system, params); });
  } catch (const std::exception& e) {
    fail(e.what());
  }
  system.stop();
  report(o, bench, "tact", secs, result.messages);
  return 0;
}

}  // namespace suite
