// balance-multi, tact (Cforall thesis, "Work Stealing"; workloads/balance.hpp):
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
#include "balance_tact.hpp"

int main(int argc, char** argv) {
  return suite::balance_main(argc, argv, "balance_multi", &tact::bench::run_balance_multi);
}
