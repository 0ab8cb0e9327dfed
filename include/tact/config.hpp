#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include <tact/export.hpp>

#include <tact/defaults.hpp>
#include <tact/diagnostic.hpp>

namespace tact::tx {
struct rollback;
TACT_API void report_rollback(const rollback& r);
}  // namespace tact::tx

namespace tact {

// How to build an actor_system. An aggregate: name what you change.
//
//   tact::actor_system sys{{.workers = 4, .queues = 128}};
//
// A configuration that cannot work (zero workers, fewer queues than
// workers) is refused by the actor_system constructor with
// std::invalid_argument saying what to change.
struct system_config {
  // Worker threads. Unset: one per processing unit.
  std::optional<std::uint32_t> workers{};

  // Work queues (mailbox shards), at least one per worker; each worker owns
  // a contiguous block. Unset: defaults::queues_per_worker per worker, or
  // one queue with a single worker.
  std::optional<std::uint32_t> queues{};

  // First and smallest chunk of a copy queue, in envelopes.
  std::uint32_t copy_queue_floor = defaults::copy_queue_floor;

  // Same-queue sends appended to the batch in progress, per gulp; 0 sends
  // everything through the mailboxes, as the Cforall design does.
  std::uint32_t local_batch = defaults::local_batch;

  // How long a worker runs one gulp before the queue's other mail waits
  // for its next turn and the worker's other queues run (checked between
  // messages); 0: the whole gulp, however long (see docs/fairness.md).
  std::chrono::nanoseconds gulp_budget = defaults::gulp_budget;

  // The mailbox bound of every classic actor made in this system, in
  // messages sent to it and not yet received; 0: none. Senders wait for
  // room (overflow::wait); an actor may set its own (actor::bound_mailbox).
  // See docs/flow_control.md.
  std::uint32_t mailbox_bound = 0;

  // Idle sweeps spun, then yielded, before a worker parks: the most it
  // spins, as each worker spins only as long as its spins catch work
  // (docs/configuration.md); the yields follow a whole spin only.
  std::uint32_t idle_spins = defaults::idle_spins;
  std::uint32_t idle_yields = defaults::idle_yields;

  // Whom an idle worker tries to steal a work queue from.
  steal_policy steal = defaults::steal;

  // How often the executor weighs the messages it runs and sends to
  // decide how many workers run: while work is message-bound and runs
  // faster on fewer cores, the others rest and their queues are swept by
  // the workers that run (see docs/performance.md, "Fewer workers for
  // message-bound work"). 0: every worker always runs. Needs stealing and
  // two workers or more.
  std::chrono::nanoseconds adapt_every = defaults::adapt_every;

  // Binds worker i to one processing unit of the machine (one per core
  // first, then the cores' further hardware threads), and, on machines with
  // several NUMA nodes, places each worker's queues in its node's memory.
  // Needs hwloc; without it the workers run unbound (and it says so once).
  bool pin_workers = false;

  // Sponsors (see sponsor.hpp) the system can have at once, at most 65,536.
  // Each reserves a work queue and a runner when the system is built.
  std::uint32_t sponsors = defaults::sponsors;

  // Stack of each fiber a behaviour that waits (an ask inside a behaviour)
  // may run on, in bytes; at least defaults::fiber_stack_minimum.
  std::size_t fiber_stack_size = defaults::fiber_stack_size;

  // Receives every diagnostic, including exceptions thrown by behaviours;
  // the reaction to an exception is whatever this does (the default prints
  // and carries on; rethrowing `d.exception` ends the process). Called from
  // worker threads and from the thread calling stop(), possibly at once:
  // it must be thread-safe and must not throw.
  std::function<void(const diagnostic&)> on_diagnostic = print_diagnostic;

  // Transactional actors: a message whose become loses this many
  // compare-and-swap races serializes its actor (tx::mode), so contention
  // cannot livelock. At least 1.
  std::uint32_t collision_limit = defaults::collision_limit;
  // The mailbox bound of a transactional actor that collisions serialized
  // (see tx::bounded and docs/flow_control.md); 0: none.
  std::uint32_t collision_bound = defaults::collision_bound;

  // Receives every rolled-back transactional handler (it threw), with the
  // actor, the message and the exception; the system carries on whatever
  // it does. Same threading rules as on_diagnostic. The default passes a
  // behaviour_exception to on_diagnostic.
  std::function<void(const tx::rollback&)> on_rollback = tx::report_rollback;
};

}  // namespace tact
