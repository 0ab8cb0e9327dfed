// balance-one, tact (Cforall thesis, "Work Stealing"; workloads/balance.hpp):
// the executor workload's groups, with fewer rounds, all placed on worker
// 0; every other worker is given only dummy actors that finish on their
// first message. The work is fixed, so with stealing the runtime should
// fall as workers are added. Without stealing worker 0 would do all the
// work while the others idle; tact's default steal policy (random) is what
// is measured. With one worker there is nothing to balance: it is the
// executor workload with fewer rounds.
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
  return suite::balance_main(argc, argv, "balance_one", &tact::bench::run_balance_one);
}
