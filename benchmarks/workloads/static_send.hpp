#pragma once

// The static send workload (Cforall thesis, "Message Sends"): one actor re-sends
// one preallocated message to itself until it has received it `limit`
// times. Neither the actor nor the message is allocated per send, so the
// send and dispatch paths are the whole cost. The Google Benchmark fixture
// (support/static_send.hpp) and the suite program (suite/static_send) both
// drive it.
//
// Header-only, like the other workloads.

#include <cstdint>

#include <tact/tact.hpp>

namespace tact::bench {

struct ping : tact::message {};

// Re-sends every ping it gets until it has received `limit`. Set `received`
// and `limit` only while no ping is in flight.
struct echo : tact::actor {
  explicit echo(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t received = 0;
  std::uint64_t limit = 0;
  tact::allocation receive(ping& m) {
    if (++received < limit) *this | m;
    return Nodelete;
  }
};

}  // namespace tact::bench
