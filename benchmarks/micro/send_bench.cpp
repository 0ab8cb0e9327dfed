// Send-path micro-benchmarks (Cforall thesis, "Message Sends"), each checking its
// own result:
//   raw_floor     one thread pushes an envelope into a copy queue, pops it
//                 and calls the classic trampoline: the cost of a send with
//                 no executor around it. The queue is a work queue's batch,
//                 laid out in memory as the executor lays it out.
//   static_send   one actor re-sends one preallocated message to itself.
//                 local_batch 0 sends every message through the mailbox
//                 (the thesis's design); the default lets a same-queue send
//                 join the batch being processed.
//   handle_send   static_send through a tact::handle<ping> to the actor
//                 itself instead of a direct send: the handle's cost.
//   made_send     static_send with a new message per send, made by
//                 tact::send_new (from the per-thread block cache)...
//   heap_send     ... or by `new` with allocation::Delete, by hand.
//   dynamic_send  every send creates a new actor and a new message; each
//                 actor creates the next and then deletes itself.
//   idle_cpu      CPU time an idle system uses over two seconds.
#include <benchmark/benchmark.h>

#include "support/gbench_report.hpp"
#include "support/static_send.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <tact/tact.hpp>

#include "mailbox/work_queue.hpp"
#include "support/padded.hpp"

namespace {

using tact::bench::ping;

// The floor's receiver: the same behaviour as tact::bench::echo minus the
// re-send.
struct counter : tact::actor {
  std::uint64_t received = 0;
  tact::allocation receive(ping&) {
    ++received;
    return Nodelete;
  }
};

using tact::bench::fail_unless;
using tact::bench::report_per_message;

constexpr std::uint64_t batch = 1'000'000;

void raw_floor(benchmark::State& state) {
  tact::actor_system system{{.workers = 1}};
  counter target;
  ping message;
  auto home = std::make_unique<tact::detail::padded<tact::detail::work_queue>>(
      tact::defaults::copy_queue_floor);
  tact::detail::copy_queue& queue = home->batch();
  const tact::detail::envelope e{&target, &message, &tact::detail::deliver<counter, ping>};
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < batch; ++i) {
      if constexpr (tact::build::checks) tact::detail::actor_access::take_off(target);
      queue.push(e);
      const tact::detail::envelope& next = queue.front();
      const tact::detail::run_fn run = next.run;
      void* const to = next.target;
      void* const message = next.message;
      queue.drop_front();
      run(to, message);
      queue.recycle();
    }
  }
  fail_unless(target.received == state.iterations() * batch, "raw floor lost deliveries");
  report_per_message(state, batch);
  target | tact::finished_msg;
  system.stop();
}

void static_send(benchmark::State& state) {
  tact::bench::classic_static_send(state,
                                   {.workers = static_cast<std::uint32_t>(state.range(0)),
                                    .local_batch = static_cast<std::uint32_t>(state.range(1))},
                                   batch);
}

// Re-sends through a handle to itself, or a fresh message per send.
struct handle_echo : tact::actor {
  explicit handle_echo(tact::actor_system& system) : tact::actor{system} {}
  tact::handle<ping> self = *this;
  std::uint64_t received = 0;
  std::uint64_t limit = 0;
  tact::allocation receive(ping& m) {
    if (++received < limit) self | m;
    return Nodelete;
  }
};
template <bool Pooled>
struct fresh_echo : tact::actor {
  explicit fresh_echo(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t received = 0;
  std::uint64_t limit = 0;
  tact::allocation receive(ping&) {
    if (++received == limit) return Nodelete;
    if constexpr (Pooled) {
      tact::send_new<ping>(*this);
    } else {
      auto* m = new ping;
      m->set_allocation(Delete);
      *this | *m;
    }
    return Nodelete;
  }
};

// static_send's loop with another echo.
template <class Echo>
void echo_send(benchmark::State& state) {
  tact::bench::classic_static_send<Echo>(
      state,
      {.workers = static_cast<std::uint32_t>(state.range(0)),
       .local_batch = static_cast<std::uint32_t>(state.range(1))},
      batch);
}
void echo_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"workers", "local_batch"})
      ->Args({1, tact::defaults::local_batch})
      ->Args({2, tact::defaults::local_batch});
}
void handle_send(benchmark::State& state) { echo_send<handle_echo>(state); }
void made_send(benchmark::State& state) { echo_send<fresh_echo<true>>(state); }
void heap_send(benchmark::State& state) { echo_send<fresh_echo<false>>(state); }

struct spawner : tact::actor {
  explicit spawner(std::uint64_t left) : left{left} {}
  std::uint64_t left;
  tact::allocation receive(ping&) {
    if (left > 0) {
      auto* next = new spawner{left - 1};
      auto* m = new ping;
      m->set_allocation(Delete);
      *next | *m;
    }
    return Delete;
  }
};

void dynamic_send(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  constexpr std::uint64_t chain = 200'000;
  tact::actor_system system{{.workers = workers}};
  for (auto _ : state) {
    auto& first = system.spawn<spawner>(chain - 1);
    auto* m = new ping;
    m->set_allocation(tact::allocation::Delete);
    first | *m;
    system.await_quiescence();
  }
  const tact::worker_stats totals = system.stats().total;
  fail_unless(totals.actors_created == state.iterations() * chain &&
                  totals.actors_finished == totals.actors_created,
              "dynamic send: every actor must be created and deleted once");
  report_per_message(state, chain);
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void idle_cpu(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  double used = 0;
  for (auto _ : state) {
    system.await_quiescence();
    const double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds{2});
    used = cpu_seconds() - before;
    state.SetIterationTime(2.0);
  }
  fail_unless(system.stats().total.messages_processed == 0, "idle system processed messages");
  state.counters["cpu_ms_per_2s"] = used * 1e3;
}

}  // namespace

BENCHMARK(raw_floor)->Unit(benchmark::kMillisecond);
BENCHMARK(static_send)
    ->ArgNames({"workers", "local_batch"})
    ->Args({1, 0})
    ->Args({1, tact::defaults::local_batch})
    ->Args({2, 0})
    ->Args({2, tact::defaults::local_batch})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(handle_send)->Apply(echo_args)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(made_send)->Apply(echo_args)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(heap_send)->Apply(echo_args)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(dynamic_send)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(idle_cpu)
    ->ArgName("workers")
    ->Arg(2)
    ->Iterations(1)
    ->Repetitions(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
