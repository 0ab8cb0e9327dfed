// balance-multi, tact (seed 000, "Work Stealing"; workloads/balance.hpp):
// the executor workload's groups, with fewer rounds, placed on every other
// worker (0, 2, ...); the rest are given only dummy actors that finish on
// their first message. The work grows with the workers, so with stealing
// the runtime should stay flat. With one or two workers only worker 0 is
// loaded: the same layout as balance_one. Without stealing the loaded
// workers would do all the work while the others idle; tact's default
// steal policy (random) is what is measured.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   actors   working actors per loaded worker,
//            a multiple of group                   2,000      400
//   group    actors per group, at least 2            100      100
//   rounds   rounds, at least 1                       40        5
//   work     dummy computation steps per message       0        0
// Messages: loaded workers * actors * (group - 1) * rounds (7.9 million
// per loaded worker by default).
//
// Timed: creating every actor, poking the dummies, the rounds, until the
// system is quiescent. Checked: every working actor ran every round and
// received every message, every dummy finished, and the system's delivery
// count agrees. The run is refused if the actors did not land on the
// queues intended.
#include <cstdint>
#include <exception>

#include <tact/tact.hpp>

#include "suite.hpp"
#include "workloads/balance.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const tact::bench::balance_params params{
      .actors_per_loaded_worker = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
      .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
      .rounds = static_cast<std::uint32_t>(o.param("rounds", 40, 5)),
      .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};

  tact::actor_system system{{.workers = o.threads()}};
  tact::bench::balance_result result;
  double secs = 0;
  try {
    secs = suite::seconds([&] { result = tact::bench::run_balance_multi(system, params); });
  } catch (const std::exception& e) {
    suite::fail(e.what());
  }
  system.stop();
  suite::report(o, "balance_multi", "tact", secs, result.messages);
}
