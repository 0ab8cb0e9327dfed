// Transactional-actor benchmarks (xTActors, "Transactional Actors"), each
// checking its own result. Every figure is wall-clock time per message
// (counter per_msg), so transactional and classic numbers from one run of
// this binary can be compared directly (summary.py prints the ratios).
//
//   tx_static_send         one parallel-mode transactional actor re-sends a
//                          countdown to itself, tx::send(tx::self(), n - 1),
//                          1,000,000 messages per iteration: the cost of a
//                          transactional dispatch plus a staged send and its
//                          commit, with no become (so no compare-and-swap).
//   classic_static_send    the classic equivalent, the same fixture as
//                          static_send in micro/send_bench.cpp (default
//                          local_batch; support/static_send.hpp): the
//                          baseline of tx_static_send, in the same run.
//                          It re-sends one preallocated message, so it
//                          pays for no message at all.
//   classic_value_send     the classic actor re-sending the countdown as a
//                          fresh heap message per send (allocation Delete,
//                          freed by the executor after delivery), as
//                          tx_static_send must: the like-for-like baseline,
//                          with the cost of making a message included.
//   tx_become_parallel     one parallel-mode actor whose behaviour holds a
//                          countdown: on each message it becomes
//                          countdown(n - 1) and re-sends a tick to itself,
//                          1,000,000 messages per iteration. One message is
//                          in flight at a time, so nothing collides: this is
//                          tx_static_send plus the cost of a become (a
//                          behaviour built, the compare-and-swap that
//                          installs it, the old one retired and freed).
//   tx_become_serialized   the same actor spawned in tx::mode::serialized.
//   tx_counter_contention  200,000 `increment` messages sent from the
//                          benchmark thread to one parallel-mode counter
//                          whose handler does tx::become(counter(n + 1)),
//                          then a get answered to a customer actor; checks
//                          the count. With two workers both run the counter
//                          at once and becomes collide: the counters
//                          collisions, retries and serializations (per
//                          iteration, from system.stats()) show how much,
//                          and whether the actor switched to serialized.
//                          A fresh counter per iteration; the timed part
//                          also holds its spawn and the get round trip
//                          (two messages, next to 200,000). forwards counts
//                          dispatches of messages that reached a queue other
//                          than a serialized actor's home and were re-posted.
//   tx_counter_serialized  the same counter spawned in tx::mode::serialized:
//                          one invocation at a time, never a collision.
//   tx_independent_actors  1,000 independent transactional actors, each
//                          counting down from 1,000 by re-sending to itself,
//                          all started at once (1,000,000 messages per
//                          iteration): throughput without any contention,
//                          where a second worker should help.
//
// Completion is detected with await_quiescence, as in send_bench.cpp; the
// last handler of each chain also records that it ran (an atomic: handlers
// may run on several workers at once), and the commit/dispatch totals of
// system.stats() must match the messages sent.
#include <benchmark/benchmark.h>

#include "support/gbench_report.hpp"
#include "support/static_send.hpp"

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

namespace {

namespace tx = tact::tx;

using tact::bench::fail_unless;
using tact::bench::report_per_message;

// A per-iteration average of a counter summed over the whole run.
void report_per_iteration(benchmark::State& state, const char* name, std::uint64_t total) {
  state.counters[name] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kAvgIterations);
}

tact::worker_stats totals(const tact::actor_system& system) { return system.stats().total; }

constexpr std::uint64_t batch = 1'000'000;

// ---- tx_static_send --------------------------------------------------------

// Counts down to 0 by re-sending to itself; the message with 0 raises `done`.
tx::behaviour countdown(std::atomic<std::uint64_t>* done) {
  return {[done](std::uint64_t n) {
    if (n == 0)
      done->fetch_add(1, std::memory_order_relaxed);
    else
      tx::send(tx::self(), n - 1);
  }};
}

void tx_static_send(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  std::atomic<std::uint64_t> done{0};
  tx::actor_ref target = tx::spawn(system, countdown(&done));
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    done.store(0, std::memory_order_relaxed);
    tx::send(target, batch - 1);  // batch messages: batch - 1, ..., 0
    system.await_quiescence();
    fail_unless(done.load(std::memory_order_relaxed) == 1, "tx static send: the chain did not end");
  }
  const tact::worker_stats after = totals(system);
  const std::uint64_t expected = state.iterations() * batch;
  fail_unless(after.tx_commits - before.tx_commits == expected,
              "tx static send: every message must commit once");
  fail_unless(after.tx_dispatches - before.tx_dispatches == expected,
              "tx static send: every message must be dispatched once");
  fail_unless(after.tx_collisions == before.tx_collisions && after.tx_rollbacks == before.tx_rollbacks,
              "tx static send: no become, so no collision and no rollback");
  report_per_message(state, batch);
  target.reset();
  system.stop();
}

// ---- classic_static_send ---------------------------------------------------

void classic_static_send(benchmark::State& state) {
  tact::bench::classic_static_send(
      state, {.workers = static_cast<std::uint32_t>(state.range(0))}, batch);
}

// ---- classic_value_send ----------------------------------------------------

struct countdown_msg : tact::message {
  explicit countdown_msg(std::uint64_t left) : tact::message{tact::allocation::Delete}, n{left} {}
  const std::uint64_t n;
};

struct classic_countdown : tact::actor {
  explicit classic_countdown(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t ended = 0;
  tact::allocation receive(countdown_msg& m) {
    if (m.n == 0)
      ++ended;
    else
      *this | *new countdown_msg{m.n - 1};
    return Nodelete;
  }
};

void classic_value_send(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  classic_countdown target{system};
  for (auto _ : state) {
    target | *new countdown_msg{batch - 1};
    system.await_quiescence();
  }
  fail_unless(target.ended == static_cast<std::uint64_t>(state.iterations()),
              "classic value send: a chain did not end");
  report_per_message(state, batch);
  target | tact::finished_msg;
  system.stop();
}

// ---- tx_become_parallel / tx_become_serialized -----------------------------

struct tick {};

// Its state is the count of ticks left; the tick that finds 0 raises `done`.
tx::behaviour becoming(std::uint64_t n, std::atomic<std::uint64_t>* done) {
  return {[n, done](tick) {
    if (n == 0) {
      done->fetch_add(1, std::memory_order_relaxed);
      return;
    }
    tx::become(becoming(n - 1, done));
    tx::send(tx::self(), tick{});
  }};
}

void run_become(benchmark::State& state, tx::mode mode) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  std::atomic<std::uint64_t> done{0};
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    done.store(0, std::memory_order_relaxed);
    // A fresh actor per iteration: its behaviour is the countdown.
    tx::actor_ref target = tx::spawn(system, becoming(batch - 1, &done), mode);
    tx::send(target, tick{});  // batch messages: batch - 1 becomes, then the end
    target.reset();
    system.await_quiescence();
    fail_unless(done.load(std::memory_order_relaxed) == 1, "tx become: the chain did not end");
  }
  const tact::worker_stats after = totals(system);
  const std::uint64_t expected = state.iterations() * batch;
  fail_unless(after.tx_commits - before.tx_commits == expected,
              "tx become: every message must commit once");
  fail_unless(after.tx_becomes - before.tx_becomes == state.iterations() * (batch - 1),
              "tx become: every message but the last must become");
  fail_unless(after.tx_collisions == before.tx_collisions && after.tx_rollbacks == before.tx_rollbacks,
              "tx become: one message in flight, so no collision and no rollback");
  report_per_message(state, batch);
  system.stop();
}

void tx_become_parallel(benchmark::State& state) { run_become(state, tx::mode::parallel); }
void tx_become_serialized(benchmark::State& state) { run_become(state, tx::mode::serialized); }

// ---- tx_counter_contention / tx_counter_serialized -------------------------

struct increment {};
struct get {};

tx::behaviour counter(std::int64_t n) {
  return {[n](increment) { tx::become(counter(n + 1)); },
          [n](const tx::actor_ref& customer, get) { tx::send(customer, n); }};
}

constexpr std::int64_t increments = 200'000;

void run_counter(benchmark::State& state, tx::mode mode) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  std::atomic<std::int64_t> value{-1};
  tx::actor_ref customer = tx::spawn(
      system, {[&value](std::int64_t n) { value.store(n, std::memory_order_relaxed); }});
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    // A fresh counter each iteration: a parallel one that serialized itself
    // in the last iteration would otherwise stay serialized.
    tx::actor_ref c = tx::spawn(system, counter(0), mode);
    for (std::int64_t i = 0; i < increments; ++i) tx::send(c, increment{});
    system.await_quiescence();
    value.store(-1, std::memory_order_relaxed);
    tx::send(c, customer, get{});
    system.await_quiescence();
    fail_unless(value.load(std::memory_order_relaxed) == increments,
                "tx counter: the count must equal the increments sent");
  }
  const tact::worker_stats after = totals(system);
  const std::uint64_t iterations = state.iterations();
  // Each iteration: the increments and the get commit, and the reply.
  fail_unless(after.tx_commits - before.tx_commits ==
                  iterations * (static_cast<std::uint64_t>(increments) + 2),
              "tx counter: every message must commit once");
  fail_unless(after.tx_becomes - before.tx_becomes ==
                  iterations * static_cast<std::uint64_t>(increments),
              "tx counter: every increment must become once");
  fail_unless(after.tx_rollbacks == before.tx_rollbacks && after.tx_unmatched == before.tx_unmatched,
              "tx counter: nothing rolls back or goes unmatched");
  if (mode == tx::mode::serialized)
    fail_unless(after.tx_collisions == before.tx_collisions,
                "tx counter: a serialized actor never collides");
  report_per_message(state, static_cast<std::uint64_t>(increments));
  report_per_iteration(state, "collisions", after.tx_collisions - before.tx_collisions);
  report_per_iteration(state, "retries", after.tx_retries - before.tx_retries);
  report_per_iteration(state, "serializations",
                       after.tx_serializations - before.tx_serializations);
  // Dispatches beyond one per message: messages forwarded to a serialized
  // actor's home queue from the queue they were first posted to.
  report_per_iteration(state, "forwards",
                       (after.tx_dispatches - before.tx_dispatches) -
                           iterations * (static_cast<std::uint64_t>(increments) + 2));
  customer.reset();
  system.stop();
}

void tx_counter_contention(benchmark::State& state) { run_counter(state, tx::mode::parallel); }
void tx_counter_serialized(benchmark::State& state) { run_counter(state, tx::mode::serialized); }

// ---- tx_independent_actors -------------------------------------------------

constexpr std::uint64_t actors = 1'000;
constexpr std::uint64_t chain = 1'000;

void tx_independent_actors(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  tact::actor_system system{{.workers = workers}};
  std::atomic<std::uint64_t> done{0};
  std::vector<tx::actor_ref> all;
  all.reserve(actors);
  for (std::uint64_t i = 0; i < actors; ++i) all.push_back(tx::spawn(system, countdown(&done)));
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    done.store(0, std::memory_order_relaxed);
    for (const tx::actor_ref& a : all) tx::send(a, chain - 1);  // chain messages each
    system.await_quiescence();
    fail_unless(done.load(std::memory_order_relaxed) == actors,
                "tx independent actors: every chain must end");
  }
  const tact::worker_stats after = totals(system);
  const std::uint64_t expected = state.iterations() * actors * chain;
  fail_unless(after.tx_commits - before.tx_commits == expected,
              "tx independent actors: every message must commit once");
  fail_unless(after.tx_dispatches - before.tx_dispatches == expected,
              "tx independent actors: every message must be dispatched once");
  report_per_message(state, actors * chain);
  all.clear();
  system.stop();
}

}  // namespace

BENCHMARK(tx_static_send)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(classic_static_send)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(classic_value_send)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(tx_become_parallel)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(tx_become_serialized)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(tx_counter_contention)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(tx_counter_serialized)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(tx_independent_actors)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
