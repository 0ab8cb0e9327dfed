#pragma once

// The balance workloads (Cforall thesis, "Work Stealing"): the executor workload's
// groups, all placed on chosen workers, with every other worker given only
// dummy actors that finish on their first message. Without stealing the
// loaded workers do all the work while the rest idle; with stealing the
// idle workers should take queues from the loaded ones.
//   balance-one    every working actor on worker 0. The work is fixed, so
//                  runtime should fall as workers are added.
//   balance-multi  working actors on every other worker (0, 2, 4, ...),
//                  `actors_per_loaded_worker` on each, so the work grows
//                  with the workers and runtime should stay flat. With two
//                  workers only worker 0 is loaded: the same layout as
//                  balance-one, and the two differ only from four up.
//
// Placement. A fresh system gives an actor created outside its workers
// queue `i mod Q` (i = creation index, Q = system.queues()), and at
// construction worker w owns queues [w*Q/N, (w+1)*Q/N) (N =
// system.workers()). So this thread creates actors in queue order, making a
// working actor where the queue belongs to a loaded worker and a dummy
// where it does not, until every working actor exists. Each actor's queue
// is then checked against the one intended: a system that has created
// actors before gives a different order, and the run is refused (the
// workload cannot tell whether queues were stolen earlier, so it needs a
// fresh system for its layout to mean anything).

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "executor.hpp"

namespace tact::bench {

// The executor workload's defaults, with fewer rounds, as in the thesis:
// 11.9 million messages per loaded worker, about 0.3 s at two workers on
// two cores without stealing.
struct balance_params {
  std::uint32_t actors_per_loaded_worker = 2'000;  // a multiple of `group`
  std::uint32_t group = 100;
  std::uint32_t rounds = 60;
  std::uint32_t work = 0;  // per message, as in executor_params
};

struct balance_result {
  std::uint64_t messages = 0;  // round messages received by the working actors
  std::uint64_t deliveries = 0;  // every delivery during the run, from the system's statistics
  std::uint32_t working_actors = 0;
  std::uint32_t dummies = 0;
};

// Finishes on its first message: it only takes a queue index, and gives
// its worker one message to process. Owned by the workload.
struct dummy_poke : message {};

class balance_dummy final : public actor {
 public:
  explicit balance_dummy(actor_system& system) : actor{system} {}
  allocation receive(dummy_poke&) { return Finished; }
};

namespace balance_detail {

// Whether each queue starts out owned by a loaded worker: one worker in
// every `stride`, starting at worker 0.
inline std::vector<bool> loaded_queues(std::uint32_t queues, std::uint32_t workers,
                                       std::uint32_t stride) {
  std::vector<bool> loaded(queues);
  for (std::uint32_t w = 0; w < workers; ++w) {
    const auto first = static_cast<std::uint32_t>(std::uint64_t{w} * queues / workers);
    const auto last = static_cast<std::uint32_t>(std::uint64_t{w + 1} * queues / workers);
    for (std::uint32_t q = first; q < last; ++q) loaded[q] = w % stride == 0;
  }
  return loaded;
}

inline balance_result run_balance(actor_system& system, const balance_params& params,
                                  std::uint32_t stride, const char* name) {
  const std::uint32_t workers = system.workers();
  const std::uint32_t queues = system.queues();
  const std::uint32_t loaded_workers = (workers + stride - 1) / stride;
  const std::vector<bool> loaded = loaded_queues(queues, workers, stride);

  round_groups work{{.actors = params.actors_per_loaded_worker * loaded_workers,
                     .group = params.group,
                     .rounds = params.rounds,
                     .work = params.work}};
  std::vector<std::unique_ptr<balance_dummy>> dummies;
  bool placed = true;
  for (std::uint64_t index = 0; !work.complete(); ++index) {
    const auto queue = static_cast<std::uint32_t>(index % queues);
    actor& created = loaded[queue]
                         ? static_cast<actor&>(work.add(system))
                         : *dummies.emplace_back(std::make_unique<balance_dummy>(system));
    // Reads the queue index the executor gave the actor (not public API).
    placed = placed && detail::actor_access::queue_of(created) == queue;
  }
  if (!placed) {
    work.abandon();
    for (auto& d : dummies) *d | finished_msg;
    system.await_quiescence();
    throw std::runtime_error{
        std::string{name} +
        ": the actors did not land on the queues intended; run it on a fresh actor_system "
        "on which no actor has been created yet"};
  }

  const std::uint64_t before = deliveries_so_far(system);
  std::optional<dummy_poke> poke;  // none without dummies: never sent, it would be reported
  if (!dummies.empty()) poke.emplace();
  for (auto& d : dummies) *d | *poke;
  work.start();
  system.await_quiescence();

  balance_result result{.messages = work.check(),
                        .deliveries = deliveries_so_far(system) - before,
                        .working_actors = params.actors_per_loaded_worker * loaded_workers,
                        .dummies = static_cast<std::uint32_t>(dummies.size())};
  for (const auto& d : dummies)
    if (!d->finished()) fail(std::string{name} + ": a dummy actor did not finish");
  const std::uint64_t expected = result.messages + result.working_actors + result.dummies;
  if (result.deliveries != expected)
    fail(std::string{name} + ": the system counted " + std::to_string(result.deliveries) +
         " deliveries, the actors " + std::to_string(expected));
  return result;
}

}  // namespace balance_detail

// Runs balance-one on `system`, which must be fresh (see Placement above),
// and checks it, throwing std::runtime_error if the result is wrong. From a
// thread that is not one of the system's workers; blocks until the run is
// over.
inline balance_result run_balance_one(actor_system& system, const balance_params& params) {
  return balance_detail::run_balance(system, params, system.workers(), "balance-one");
}

// Runs balance-multi on `system`; as run_balance_one.
inline balance_result run_balance_multi(actor_system& system, const balance_params& params) {
  return balance_detail::run_balance(system, params, 2, "balance-multi");
}

}  // namespace tact::bench
