#pragma once

// The classic static send (Cforall thesis, "Message Sends"; the workload is in
// workloads/static_send.hpp) as a Google Benchmark fixture: the baseline
// other send benchmarks are measured against, shared so that each binary
// can compare with it in the same run.
#include <benchmark/benchmark.h>

#include <cstdint>

#include <tact/tact.hpp>

#include "support/gbench_report.hpp"
#include "workloads/static_send.hpp"

namespace tact::bench {

// Each iteration sends `messages` and waits until the last one ran. `Echo`:
// an actor like echo (received, limit, re-sends until limit), for variants
// measured against it in the same run.
template <class Echo = echo>
void classic_static_send(benchmark::State& state, const tact::system_config& config,
                         std::uint64_t messages) {
  tact::actor_system system{config};
  Echo target{system};
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
