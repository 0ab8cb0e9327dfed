// Work-stealing benchmarks (Cforall thesis, "Work Stealing" and "Executor"): each
// workload of benchmarks/workloads under every steal policy, at one and two
// workers (one worker has nobody to steal from, so it runs only `none`).
// Entries are named workload/policy/workers:N; each checks its own result
// and throws (ending the program) if it is wrong.
//   executor       groups of 100 actors, each sending one message to every
//                  other member per round. Saturated and balanced: stealing
//                  can only cost here, so every policy should match `none`.
//   repeat         one client scatters a request to 100,000 servers and
//                  gathers the replies, repeatedly. Stealing moves the
//                  client's queue and its large state: the thesis found
//                  `none` fastest.
//   balance_one    the executor groups, all on worker 0; dummy actors on the
//                  other workers. The thesis puts the ideal speed-up of
//                  stealing over `none` at "N / N - 1" for N workers, read as
//                  N / (N - 1): 2 at two workers, where it agrees with the
//                  plain bound of N workers sharing work one did (from three
//                  workers on the two differ, N being the larger). It
//                  measured slightly less than ideal.
//   balance_multi  the executor groups on every other worker (0, 2, ...),
//                  dummies between. Ideal with stealing: half the runtime of
//                  `none` (the thesis' "0.5"). At two workers only worker 0
//                  is loaded, so the layout is balance_one's.
//   balance_one_work  balance_one with some computation per message and
//                  fewer rounds: without work, a message costs less than
//                  sending it to another core, so on a small machine
//                  sharing the groups between workers cannot pay.
// Timing: every iteration builds a fresh actor_system (the balance layouts
// need one, and no queue is left where an earlier iteration's steals put
// it). The timer covers the whole workload: creating its actors, the
// messages, waiting for quiescence, checking, destroying the actors;
// starting the system's threads and stopping them are outside it, being
// the same for every workload. Two iterations per entry keep the whole
// program under half a minute on two cores; add --benchmark_repetitions
// for the spread.
// Counters: msgs_per_s (the workload's own messages, round messages or
// requests plus replies, over the timed region); and, per iteration, from
// system.stats() after the run: steals and missed_gulps (totals), and
// busiest_share, the fraction of all deliveries made by the busiest worker
// (1 means one worker did everything; 1/N is perfect balance).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <tact/tact.hpp>

#include "workloads/balance.hpp"
#include "workloads/executor.hpp"
#include "workloads/repeat.hpp"

namespace {

// Runs one workload on a fresh system; returns the messages it counted.
using workload_fn = std::function<std::uint64_t(tact::actor_system&)>;

// The workloads are sized for 0.1 to 0.7 s per run on two cores, so an
// entry takes 0.3 to 1.5 s.
constexpr benchmark::IterationCount iterations = 2;

constexpr tact::steal_policy policies[] = {tact::steal_policy::none, tact::steal_policy::random,
                                           tact::steal_policy::longest_victim,
                                           tact::steal_policy::locality};

std::string_view name_of(tact::steal_policy p) {
  switch (p) {
    case tact::steal_policy::none: return "none";
    case tact::steal_policy::random: return "random";
    case tact::steal_policy::longest_victim: return "longest_victim";
    case tact::steal_policy::locality: return "locality";
  }
  return "unknown";
}

double busiest_share_of(const tact::system_stats& stats) {
  std::uint64_t busiest = 0;
  std::uint64_t all = 0;
  for (const tact::worker_stats& w : stats.workers) {
    busiest = std::max(busiest, w.messages_processed);
    all += w.messages_processed;
  }
  return all == 0 ? 0.0 : static_cast<double>(busiest) / static_cast<double>(all);
}

void run_entry(benchmark::State& state, const std::string& name, const workload_fn& workload,
               tact::system_config config) {
  std::uint64_t messages = 0;
  std::uint64_t steals = 0;
  std::uint64_t missed_gulps = 0;
  double busiest_share = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::optional<tact::actor_system> system{std::in_place, config};
    state.ResumeTiming();
    try {
      messages += workload(*system);
    } catch (const std::exception& e) {
      // Name the entry: the message alone does not say which one failed.
      throw std::runtime_error{name + ": " + e.what()};
    }
    state.PauseTiming();
    const tact::system_stats stats = system->stats();
    steals += stats.total.steals;
    missed_gulps += stats.total.missed_gulps;
    busiest_share += busiest_share_of(stats);
    system.reset();  // stop(): every actor has finished
    state.ResumeTiming();
  }
  state.counters["msgs_per_s"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate);
  state.counters["steals"] =
      benchmark::Counter(static_cast<double>(steals), benchmark::Counter::kAvgIterations);
  state.counters["missed_gulps"] =
      benchmark::Counter(static_cast<double>(missed_gulps), benchmark::Counter::kAvgIterations);
  state.counters["busiest_share"] =
      benchmark::Counter(busiest_share, benchmark::Counter::kAvgIterations);
}

void register_workload(std::string_view workload_name, const workload_fn& workload) {
  for (const std::uint32_t workers : {1U, 2U}) {
    for (const tact::steal_policy policy : policies) {
      if (workers == 1 && policy != tact::steal_policy::none) continue;
      std::string name{workload_name};
      name.append("/").append(name_of(policy)).append("/workers:").append(std::to_string(workers));
      const tact::system_config config{.workers = workers, .steal = policy};
      benchmark::RegisterBenchmark(name.c_str(),
                                   [name, workload, config](benchmark::State& state) {
                                     run_entry(state, name, workload, config);
                                   })
          ->Iterations(iterations)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_workload("executor", [](tact::actor_system& system) {
    return tact::bench::run_executor(system, {}).messages;
  });
  register_workload("repeat", [](tact::actor_system& system) {
    return tact::bench::run_repeat(system, {}).messages;
  });
  register_workload("balance_one", [](tact::actor_system& system) {
    return tact::bench::run_balance_one(system, {}).messages;
  });
  register_workload("balance_multi", [](tact::actor_system& system) {
    return tact::bench::run_balance_multi(system, {}).messages;
  });
  // The same with about 50 ns of computation per message, a fifth of the
  // rounds: enough per message that sharing it between cores pays.
  register_workload("balance_one_work", [](tact::actor_system& system) {
    return tact::bench::run_balance_one(system, {.rounds = 6, .work = 200}).messages;
  });

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
