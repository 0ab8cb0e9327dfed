#pragma once

#include "program.hpp"

namespace tact_fuzz {

// Runs `p` on a tact::testing::deterministic_system with p's schedule, and
// on the reference model (model.hpp) alongside, checking after every
// operation and at the end; aborts with a message on the first mismatch.
// The run ends by running to idle, finishing every actor and stopping the
// system, then compares counters and frees everything.
void run(const program& p);

}  // namespace tact_fuzz
