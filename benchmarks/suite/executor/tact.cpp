// executor, tact (Cforall thesis, "Executor"): groups of actors that, round after
// round, each send one message to every other member of their group and
// wait for one from each (workloads/executor.hpp). Nothing is computed per
// message by default, so the executor's send and dispatch paths are the
// whole cost. The thesis runs 40,000 actors in groups of 100 for 400
// rounds; the defaults keep the group and shrink the rest.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   actors   actors, a multiple of group          2,000      400
//   group    actors per group, at least 2           100      100
//   rounds   rounds, at least 1                      80       10
//   work     dummy computation steps per message      0        0
// Messages: actors * (group - 1) * rounds (15.8 million by default).
//
// Timed: creating the actors, the rounds, until the system is quiescent.
// Checked: every actor ran every round and received every message, and the
// system's delivery count agrees.
#include <cstdint>
#include <exception>

#include <tact/tact.hpp>

#include "suite.hpp"
#include "workloads/executor.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const tact::bench::executor_params params{
      .actors = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
      .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
      .rounds = static_cast<std::uint32_t>(o.param("rounds", 80, 10)),
      .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};

  tact::actor_system system{{.workers = o.threads()}};
  tact::bench::executor_result result;
  double secs = 0;
  try {
    secs = suite::seconds([&] { result = tact::bench::run_executor(system, params); });
  } catch (const std::exception& e) {
    suite::fail(e.what());
  }
  system.stop();
  suite::report(o, "executor", "tact", secs, result.messages);
}
