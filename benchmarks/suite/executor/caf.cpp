// executor, CAF: the same workload as tact.cpp (common/caf_rounds.hpp has
// the actors). Each member reports its counts to the main thread after its
// last round: one message per actor on top of the rounds.
//
// Parameters: as tact.cpp (actors, group, rounds, work).
#include <cstdint>
#include <vector>

#include <caf/all.hpp>

#include "caf_rounds.hpp"
#include "suite.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::caf_rounds::params params{
      .actors = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
      .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
      .rounds = static_cast<std::uint32_t>(o.param("rounds", 80, 10)),
      .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};
  suite::caf_rounds::validate(params);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t messages = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      std::vector<caf::actor> members;
      members.reserve(params.actors);
      for (std::uint32_t i = 0; i < params.actors; ++i)
        members.push_back(suite::caf_rounds::spawn_member(system, params, caf::actor{main_actor}));
      suite::caf_rounds::start(main_actor, members, params);
      messages = suite::caf_rounds::gather(main_actor, params);
    });
  }
  system.await_all_actors_done();
  suite::report(o, "executor", "caf", secs, messages);
}
