#pragma once

// The classic static send (seed 000, "Message Sends"): one actor re-sends
// one preallocated message to itself. The baseline other send benchmarks
// are measured against, shared so that each binary can compare with it in
// the same run.
#include <benchmark/benchmark.h>

#include <cstdint>

#include <tact/tact.hpp>

#include "support/gbench_report.hpp"

namespace tact::bench {

struct ping : tact::message {};

struct echo : tact::actor {
  explicit echo(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t received = 0;
  std::uint64_t limit = 0;
  tact::allocation receive(ping& m) {
    if (++received < limit) *this | m;
    return Nodelete;
  }
};

// Each iteration sends `messages` and waits until the last one ran.
inline void classic_static_send(benchmark::State& state, const tact::system_config& config,
                                std::uint64_t messages) {
  tact::actor_system system{config};
  echo target{system};
  ping message;
  for (auto _ : state) {
    target.received = 0;
    target.limit = messages;
    target | message;
    system.await_quiescence();
  }
  fail_unless(target.received == messages, "static send lost messages");
  report_per_message(state, messages);
  target | tact::finished_msg;
  system.stop();
}

}  // namespace tact::bench
