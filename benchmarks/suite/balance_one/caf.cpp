// balance-one, CAF: the same actors, messages and creation order as
// tact.cpp (common/caf_rounds.hpp). CAF cannot place an actor on a worker,
// so the imbalance tact.cpp starts from cannot be imposed here: this is
// the executor workload with fewer rounds and the same dummies, run by
// CAF's always-on random work stealing.
//
// Parameters: as tact.cpp (actors, group, rounds, work).
#include <cstdint>

#include "caf_rounds.hpp"

int main(int argc, char** argv) {
  return suite::caf_rounds::balance_main(argc, argv, "balance_one", [](std::uint32_t workers) {
    return workers;
  });
}
