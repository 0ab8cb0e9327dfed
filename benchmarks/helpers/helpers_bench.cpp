// Helper benchmarks: ask and timers (docs/ask.md, docs/timers.md), each
// checking its own result, each at 1 and 2 workers. Every figure is
// wall-clock time per round trip or per timer (counter per_msg), so the
// helping ask and its plain-blocking baseline from one run of this binary
// can be compared directly (summary.py prints the ratios).
//
//   ask_roundtrip_helping   tact::ask(actor, square{i}, 10s) from the
//                           benchmark thread to a classic actor that
//                           replies i * i, 10,000 round trips per
//                           iteration, each reply checked: a request moved
//                           to the heap, its reply slot, and the asker
//                           running queued work (or sleeping) while it
//                           waits.
//   ask_roundtrip_blocking  the baseline a user would write without ask: a
//                           classic message carrying a std::promise<long>*,
//                           sent with tact::send, the benchmark thread
//                           blocking on future.get(); the same 10,000
//                           round trips and checks. One message object,
//                           reused once its reply has arrived; the promise
//                           of round i is destroyed only in round i + 2,
//                           when its set_value has certainly returned.
//   behaviour_ask           a classic behaviour asks: one receive of actor
//                           A runs 10,000 tact::ask(b, square{i}, 10s) in
//                           a row, checking each reply, then sets a
//                           promise the benchmark thread waits for. Each
//                           ask moves a request to the heap, suspends A on
//                           its fiber, runs B (same worker or another),
//                           and resumes A with the answer: time per round
//                           trip.
//   behaviour_callback      the same round trips written without ask, as
//                           a customer would: A sends B a preallocated
//                           request naming A as the reply target and
//                           returns; B sends A a preallocated answer; A
//                           checks it in a second receive and sends the
//                           next request. No allocation, no fiber.
//   tx_ask_roundtrip        tact::tx::ask<long>(system, ref, 10s, i) to a
//                           transactional actor that sends i + 1 to its
//                           customer (the first element), 10,000 round
//                           trips, each reply checked: includes spawning
//                           the one-shot customer actor per ask.
//   timer_throughput        100,000 send_after(0ms, counter, tick) started
//                           from the benchmark thread, all with one
//                           Nodelete tick (a classic timer does not copy
//                           its message, which only has to outlive the
//                           deliveries), to a classic actor that counts
//                           and sets a promise on the last one; the
//                           benchmark thread waits for it. Time per timer
//                           from the first start to the last delivery
//                           (timer record, timer thread, post, receive).
//   timer_start_cancel      100,000 send_after(1h, ...) timers, each
//                           cancelled right after it starts (every cancel()
//                           must return true): time per start + cancel
//                           pair, as seen by the starting thread (the
//                           timer thread removes the cancelled ones from
//                           its heap concurrently). Then, outside the
//                           timed part, the target must have received
//                           nothing and system.stats() must show no send
//                           and no delivery.
//   tx_timer_throughput     timer_throughput with tx::send_after(0ms, ref,
//                           tick{}) to a parallel-mode transactional actor
//                           that counts with an atomic (no become): each
//                           delivery builds its message from the timer's
//                           kept values. Every tick must commit once.
//   pipeline_pool           a chain of 4 classic stages, each forwarding
//                           what it receives to the next; the benchmark
//                           thread feeds 1,000 messages (each a
//                           preallocated Nodelete message passed down the
//                           chain) per batch, 100 batches per iteration,
//                           and the last stage counts: time per hop, with
//                           the stages on the pool (await_quiescence after
//                           each batch).
//   pipeline_sponsor        the same chain spawned on a tact::sponsor and
//                           run by the benchmark thread itself
//                           (run_until_quiescent after each batch): the
//                           single-thread substrate, every hop an append
//                           to the batch in hand.
//
// Classic actors live on the benchmark function's stack: each gets
// finished_msg and the system is stopped before they go out of scope.
#include <benchmark/benchmark.h>

#include "support/gbench_report.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/timer.hpp>
#include <tact/transactional.hpp>
#include <tact/tx/timer.hpp>

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;

using tact::bench::fail_unless;
using tact::bench::report_per_message;

tact::worker_stats totals(const tact::actor_system& system) { return system.stats().total; }

constexpr auto patient = 10s;  // never what a working round trip waits for
constexpr long round_trips = 10'000;
constexpr std::uint64_t timers = 100'000;

tact::system_config config(const benchmark::State& state) {
  return {.workers = static_cast<std::uint32_t>(state.range(0))};
}

// ---- ask_roundtrip_helping -------------------------------------------------

struct square : tact::request<long> {
  explicit square(long v) : value{v} {}
  long value;
};

// The same question without ask: the reply goes to a promise.
struct square_promised : tact::message {
  long value = 0;
  std::promise<long>* reply = nullptr;
};

struct calculator : tact::actor {
  explicit calculator(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(square& m) {
    m.reply(m.value * m.value);
    return Nodelete;
  }
  tact::allocation receive(square_promised& m) {
    m.reply->set_value(m.value * m.value);
    return Nodelete;
  }
};

void ask_roundtrip_helping(benchmark::State& state) {
  tact::actor_system system{config(state)};
  calculator c{system};
  long wrong = 0;
  for (auto _ : state) {
    for (long i = 0; i < round_trips; ++i) {
      auto r = tact::ask(c, square{i}, patient);
      if (!r || *r != i * i) ++wrong;
    }
  }
  fail_unless(wrong == 0, "ask roundtrip (helping): a reply was missing or wrong");
  report_per_message(state, round_trips);
  c | tact::finished_msg;
  system.stop();
}

// ---- ask_roundtrip_blocking ------------------------------------------------

void ask_roundtrip_blocking(benchmark::State& state) {
  tact::actor_system system{config(state)};
  calculator c{system};
  square_promised msg;
  // Two promises in turn: the one of round i is replaced in round i + 2,
  // after the reply of round i + 1, which the actor sends only once its
  // receive of round i (and the set_value in it) has returned.
  std::promise<long> promises[2];
  long wrong = 0;
  std::uint64_t round = 0;
  for (auto _ : state) {
    for (long i = 0; i < round_trips; ++i, ++round) {
      std::promise<long>& p = promises[round & 1];
      p = std::promise<long>{};
      std::future<long> f = p.get_future();
      msg.value = i;
      msg.reply = &p;
      c | msg;  // received before f is ready: free to reuse after get()
      if (f.get() != i * i) ++wrong;
    }
  }
  fail_unless(wrong == 0, "ask roundtrip (blocking): a reply was wrong");
  report_per_message(state, round_trips);
  c | tact::finished_msg;
  system.stop();
}

// ---- behaviour_ask / behaviour_callback -------------------------------------

struct go : tact::message {
  std::promise<void>* done = nullptr;
};

// Asks its calculator round_trips times inside one receive.
struct asking : tact::actor {
  asking(tact::actor_system& system, calculator& c) : tact::actor{system}, calculator_{c} {}
  tact::allocation receive(go& m) {
    for (long i = 0; i < round_trips; ++i) {
      auto r = tact::ask(calculator_, square{i}, patient);
      if (!r || *r != i * i) ++wrong;
    }
    m.done->set_value();
    return Nodelete;
  }
  calculator& calculator_;
  long wrong = 0;
};

void behaviour_ask(benchmark::State& state) {
  tact::actor_system system{config(state)};
  calculator c{system};
  asking a{system, c};
  go start;
  const std::uint64_t suspended_before = totals(system).suspensions;
  for (auto _ : state) {
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    start.done = &done;
    a | start;
    finished.wait();
    system.await_quiescence();  // `done` is set; the receive may still be returning
  }
  fail_unless(a.wrong == 0, "behaviour ask: a reply was missing or wrong");
  fail_unless(totals(system).suspensions > suspended_before,
              "behaviour ask: the asking behaviour never waited");
  report_per_message(state, round_trips);
  a | tact::finished_msg;
  c | tact::finished_msg;
  system.stop();
}

// ---- many_waiting -----------------------------------------------------------
// N behaviours wait at once, each asking one gate that answers them all
// when the last has asked: the cost per waiting behaviour must not grow
// with N (it once grew with N: every suspension looked at all the others).

struct admit : tact::request<int> {};

struct gate : tact::actor {
  explicit gate(tact::actor_system& system) : tact::actor{system} {}
  std::size_t expected = 0;
  std::vector<admit*> waiting;
  tact::allocation receive(admit& m) {
    // ask made it on the heap (Delete): kept here until answered, then
    // freed here.
    m.set_allocation(tact::allocation::Nodelete);
    waiting.push_back(&m);
    if (waiting.size() == expected) {
      for (admit* w : waiting) {
        w->reply(1);
        delete w;
      }
      waiting.clear();
    }
    return Nodelete;
  }
};

struct waiter : tact::actor {
  waiter(tact::actor_system& system, gate& g) : tact::actor{system}, gate_{g} {}
  tact::allocation receive(go&) {
    if (!tact::ask(gate_, admit{}, patient)) ++wrong;
    return Nodelete;
  }
  gate& gate_;
  long wrong = 0;
};

void many_waiting(benchmark::State& state) {
  tact::actor_system system{{.workers = 1, .fiber_stack_size = 64 * 1024}};
  const auto n = static_cast<std::size_t>(state.range(0));
  gate g{system};
  g.expected = n;
  std::vector<std::unique_ptr<waiter>> waiters;
  for (std::size_t i = 0; i < n; ++i) waiters.push_back(std::make_unique<waiter>(system, g));
  go start;
  for (auto _ : state) {
    for (auto& w : waiters) *w | start;
    system.await_quiescence();
  }
  long wrong = 0;
  for (auto& w : waiters) wrong += w->wrong;
  fail_unless(wrong == 0, "many waiting: an ask was not answered");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  for (auto& w : waiters) *w | tact::finished_msg;
  g | tact::finished_msg;
  system.stop();
}

struct callback_actor;
struct question : tact::message {
  long value = 0;
  callback_actor* reply_to = nullptr;
};
struct answer : tact::message {
  long value = 0;
  long square = 0;
};

// Answers questions with the one preallocated answer (one question is out
// at a time).
struct responder : tact::actor {
  explicit responder(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(question& q);
  answer reply;
};

// Sends a question, continues in receive(answer) with the next one.
struct callback_actor : tact::actor {
  callback_actor(tact::actor_system& system, responder& r) : tact::actor{system}, responder_{r} {}
  tact::allocation receive(go& m) {
    done_ = m.done;
    next_ = 0;
    ask_next();
    return Nodelete;
  }
  tact::allocation receive(answer& a) {
    if (a.value != next_ || a.square != next_ * next_) ++wrong;
    if (++next_ < round_trips)
      ask_next();
    else
      done_->set_value();
    return Nodelete;
  }
  void ask_next() {
    q_.value = next_;
    q_.reply_to = this;
    responder_ | q_;
  }
  responder& responder_;
  question q_;
  std::promise<void>* done_ = nullptr;
  long next_ = 0;
  long wrong = 0;
};

tact::allocation responder::receive(question& q) {
  reply.value = q.value;
  reply.square = q.value * q.value;
  *q.reply_to | reply;
  return Nodelete;
}

void behaviour_callback(benchmark::State& state) {
  tact::actor_system system{config(state)};
  responder r{system};
  callback_actor a{system, r};
  go start;
  for (auto _ : state) {
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    start.done = &done;
    a | start;
    finished.wait();
    system.await_quiescence();
  }
  fail_unless(a.wrong == 0, "behaviour callback: an answer was wrong");
  report_per_message(state, round_trips);
  a | tact::finished_msg;
  r | tact::finished_msg;
  system.stop();
}

// ---- tx_ask_roundtrip ------------------------------------------------------

void tx_ask_roundtrip(benchmark::State& state) {
  tact::actor_system system{config(state)};
  tx::actor_ref plus_one = tx::spawn(
      system, {[](const tx::actor_ref& customer, long v) { tx::send(customer, v + 1); }});
  long wrong = 0;
  for (auto _ : state) {
    for (long i = 0; i < round_trips; ++i) {
      auto r = tx::ask<long>(system, plus_one, patient, i);
      if (!r || *r != i + 1) ++wrong;
    }
  }
  fail_unless(wrong == 0, "tx ask roundtrip: a reply was missing or wrong");
  report_per_message(state, round_trips);
  plus_one.reset();
  system.stop();
}

// ---- timer_throughput / timer_start_cancel ---------------------------------

struct tick : tact::message {};

// Counts ticks; the `limit`-th sets `done`. Both are written by the
// benchmark thread before it starts the timers of an iteration (arming a
// timer publishes them to the timer thread, and posting to the worker).
struct tick_counter : tact::actor {
  explicit tick_counter(tact::actor_system& system) : tact::actor{system} {}
  std::uint64_t received = 0;
  std::uint64_t limit = 0;
  std::promise<void>* done = nullptr;
  tact::allocation receive(tick&) {
    if (++received == limit) done->set_value();
    return Nodelete;
  }
};

void timer_throughput(benchmark::State& state) {
  tact::actor_system system{config(state)};
  tick_counter counter{system};
  tick message;  // Nodelete, delivered by every timer: never copied
  std::uint64_t total = 0;
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    std::promise<void> done;
    std::future<void> all = done.get_future();
    counter.received = 0;
    counter.limit = timers;
    counter.done = &done;
    for (std::uint64_t i = 0; i < timers; ++i) (void)tact::send_after(0ms, counter, message);
    all.wait();
    total += counter.received;  // the last tick has run: no tick can follow
    // A tick still leaving set_value must not see `done` destroyed.
    system.await_quiescence();
  }
  const std::uint64_t expected = state.iterations() * timers;
  fail_unless(total == expected, "timer throughput: every timer must deliver once");
  const tact::worker_stats after = totals(system);
  fail_unless(after.messages_processed - before.messages_processed == expected,
              "timer throughput: one delivery per timer");
  report_per_message(state, timers);
  counter | tact::finished_msg;
  system.stop();
}

void timer_start_cancel(benchmark::State& state) {
  tact::actor_system system{config(state)};
  tick_counter counter{system};
  tick message;
  std::uint64_t lost = 0;
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < timers; ++i) {
      tact::timer t = tact::send_after(1h, counter, message);
      if (!t.cancel()) ++lost;
    }
  }
  fail_unless(lost == 0, "timer start/cancel: a cancel() lost");
  report_per_message(state, timers);
  // Give the timer thread time to drain its lists; nothing may be posted.
  std::this_thread::sleep_for(20ms);
  system.await_quiescence();
  const tact::worker_stats after = totals(system);
  fail_unless(counter.received == 0, "timer start/cancel: a cancelled timer delivered");
  fail_unless(after.messages_sent == before.messages_sent &&
                  after.messages_processed == before.messages_processed,
              "timer start/cancel: the system must stay idle");
  counter | tact::finished_msg;
  system.stop();
}

// ---- tx_timer_throughput ---------------------------------------------------

struct tx_tick {};

struct tick_count {
  std::atomic<std::uint64_t> received{0};
  std::uint64_t limit = 0;
  std::promise<void>* done = nullptr;
};

// No become: a handler never runs twice, so the count is exact.
tx::behaviour counting(tick_count* c) {
  return {[c](tx_tick) {
    if (c->received.fetch_add(1, std::memory_order_relaxed) + 1 == c->limit) c->done->set_value();
  }};
}

void tx_timer_throughput(benchmark::State& state) {
  tact::actor_system system{config(state)};
  tick_count count;
  tx::actor_ref counter = tx::spawn(system, counting(&count));
  std::uint64_t total = 0;
  const tact::worker_stats before = totals(system);
  for (auto _ : state) {
    std::promise<void> done;
    std::future<void> all = done.get_future();
    count.received.store(0, std::memory_order_relaxed);
    count.limit = timers;
    count.done = &done;
    for (std::uint64_t i = 0; i < timers; ++i) (void)tx::send_after(0ms, counter, tx_tick{});
    all.wait();
    system.await_quiescence();  // the last handler has returned
    total += count.received.load(std::memory_order_relaxed);
  }
  const std::uint64_t expected = state.iterations() * timers;
  fail_unless(total == expected, "tx timer throughput: every timer must deliver once");
  const tact::worker_stats after = totals(system);
  fail_unless(after.tx_commits - before.tx_commits == expected,
              "tx timer throughput: every tick must commit once");
  fail_unless(after.tx_rollbacks == before.tx_rollbacks && after.tx_unmatched == before.tx_unmatched,
              "tx timer throughput: nothing rolls back or goes unmatched");
  report_per_message(state, timers);
  counter.reset();
  system.stop();
}

}  // namespace

BENCHMARK(ask_roundtrip_helping)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(ask_roundtrip_blocking)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(behaviour_ask)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(behaviour_callback)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(many_waiting)->ArgName("waiting")->Arg(1000)->Arg(4000)->Arg(16000)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(tx_ask_roundtrip)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(timer_throughput)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(timer_start_cancel)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(tx_timer_throughput)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- pipeline_pool / pipeline_sponsor ---------------------------------------

constexpr std::uint64_t pipeline_stages = 4;
constexpr std::uint64_t pipeline_batch = 1'000;
constexpr std::uint64_t pipeline_batches = 100;

struct parcel : tact::message {};

struct stage : tact::actor {
  stage* next = nullptr;
  std::uint64_t arrived = 0;  // the last stage's count
  tact::allocation receive(parcel& p) {
    if (next != nullptr)
      *next | p;
    else
      ++arrived;
    return Nodelete;
  }
};

// Builds the chain with `make` (which spawns one stage), feeds it, and
// waits with `settle` after each batch.
template <class Make, class Settle>
void run_pipeline(benchmark::State& state, Make make, Settle settle) {
  std::vector<stage*> chain;
  for (std::uint64_t i = 0; i < pipeline_stages; ++i) chain.push_back(&make());
  for (std::uint64_t i = 0; i + 1 < pipeline_stages; ++i) chain[i]->next = chain[i + 1];
  std::vector<parcel> parcels(pipeline_batch);
  std::uint64_t sent = 0;
  for (auto _ : state) {
    for (std::uint64_t b = 0; b < pipeline_batches; ++b) {
      for (auto& p : parcels) *chain.front() | p;
      sent += pipeline_batch;
      settle();
    }
  }
  fail_unless(chain.back()->arrived == sent, "pipeline: a parcel was lost or duplicated");
  report_per_message(state, pipeline_batch * pipeline_batches * pipeline_stages);
  for (stage* s : chain) *s | tact::delete_msg;
  settle();
}

void pipeline_pool(benchmark::State& state) {
  tact::actor_system system{config(state)};
  run_pipeline(
      state, [&]() -> stage& { return system.spawn<stage>(); },
      [&] { system.await_quiescence(); });
  system.stop();
}

void pipeline_sponsor(benchmark::State& state) {
  tact::actor_system system{config(state)};
  {
    tact::sponsor here{system};
    run_pipeline(
        state, [&]() -> stage& { return here.spawn<stage>(); },
        [&] { here.run_until_quiescent(); });
  }
  system.stop();
}

BENCHMARK(pipeline_pool)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(pipeline_sponsor)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(
    benchmark::kMillisecond);

BENCHMARK_MAIN();
