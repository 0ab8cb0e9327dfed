// balance-multi, CAF: the same actors, messages and creation order as
// tact.cpp (common/caf_rounds.hpp). CAF cannot place an actor on a worker,
// so the imbalance tact.cpp starts from cannot be imposed here: this is
// the executor workload with fewer rounds and the same dummies, run by
// CAF's always-on random work stealing.
//
// Parameters: as tact.cpp (actors, group, rounds, work).
#include <cstdint>

#include <caf/all.hpp>

#include "caf_rounds.hpp"
#include "suite.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint32_t workers = o.threads();
  const std::uint32_t stride = 2;
  const std::uint32_t loaded_workers = (workers + stride - 1) / stride;
  suite::caf_rounds::params params{
      .actors = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
      .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
      .rounds = static_cast<std::uint32_t>(o.param("rounds", 40, 5)),
      .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};
  suite::caf_rounds::validate(params);
  params.actors *= loaded_workers;

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(workers));
  caf::actor_system system{cfg};
  std::uint64_t messages = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      messages = suite::caf_rounds::run_balance(system, main_actor, params, workers, stride);
    });
  }
  system.await_all_actors_done();
  suite::report(o, "balance_multi", "caf", secs, messages);
}
