#pragma once

#include <stdexcept>

namespace tact_fuzz {

// What the fuzzed behaviours throw on purpose: a classic one, reported and
// carried on from; a transactional one, rolled back.
struct thrown_on_purpose : std::runtime_error {
  thrown_on_purpose() : std::runtime_error{"thrown on purpose by a fuzzed behaviour"} {}
};

}  // namespace tact_fuzz
