// Work stealing on three cooperative threads, interleaved at every atomic
// operation by a seeded schedule (scheduler.hpp): the engine's work_queue,
// spinlock and try_swap, built with schedule_atomic.hpp as their atomic.
//
// Worker i owns slot i. Worker 0 sweeps its slot; worker 1 steals from
// worker 0's slot, worker 2 from worker 1's (whose slot it may find nulled
// mid-swap), each as worth_stealing looks (a queue with mail nobody
// processes), and sweeps its own; worker 2 also posts to queue 0, where
// the letters posted before the start wait. Every thread runs
// until every letter has been delivered. Checks: before every step, no
// queue sits in two slots; every batch runs on one thread at a time; every
// letter is delivered once, each sender's in order; at the end each queue
// is in one slot.
//
//   model-schedule-steal                 seeds 1 to 5000, random then PCT
//   model-schedule-steal SEED random|pct replays one schedule
//
// Also checks that two mutants are caught: a swap without its null step
// (a queue in two slots), and a worker that lets its queue go (finish)
// before draining the batch (its letters are lost: the run never ends).
// Each delivery is followed by a schedule point, so that another thread
// can run while a batch drains: a gulp that ignored being_processed is
// then reported as a batch run by two threads at once (seed 33, random).
#include <tact/detail/atomic.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "executor/queue_swap.hpp"
#include "mailbox/work_queue.hpp"
#include "scheduler.hpp"

namespace {

using tact::detail::atomic;
using tact::detail::copy_queue;
using tact::detail::envelope;
using tact::detail::work_queue;
using tact::model::scheduler;
using tact::model::strategy;

constexpr int queues = 3;
constexpr int before_start = 2;  // letters from sender 0, posted before the threads start
constexpr int during = 3;        // letters from sender 1, worker 2, while they run

struct letter {
  int from;
  int seq;
};

struct system {
  std::array<work_queue, queues> queue{work_queue{1}, work_queue{1}, work_queue{1}};
  std::array<atomic<work_queue*>, queues> slot{&queue[0], &queue[1], &queue[2]};
  std::array<letter, before_start + during> letters{};
  std::array<int, 2> next{};  // per sender, the seq expected next
  int delivered = 0;
  std::array<bool, queues> running{};  // whose batch is being run
  enum class mutant { none, one_cas, early_finish } broken = mutant::none;

  static void deliver(void* target, void* message) noexcept {
    auto& self = *static_cast<system*>(target);
    const letter& l = *static_cast<const letter*>(message);
    if (l.seq != self.next[l.from]) scheduler::current()->fail("a letter out of order, or twice");
    ++self.next[l.from];
    ++self.delivered;
  }

  void post(int q, letter& l) { queue[q].post(envelope{this, &l, &deliver}); }

  void sweep(int w) {
    work_queue& q = *slot[w].load(std::memory_order_relaxed);
    if (q.looks_empty() || q.gulp() != work_queue::gulp_result::taken) return;
    const auto at = static_cast<std::size_t>(&q - queue.data());
    if (running[at]) scheduler::current()->fail("a batch run by two threads at once");
    running[at] = true;
    if (broken == mutant::early_finish) q.finish();
    copy_queue& batch = q.batch();
    while (!batch.empty()) {
      const envelope e = batch.pop();
      e.run(e.target, e.message);
      // Delivery has no atomic of its own: without this, no other thread
      // could run while a batch drains, and the check above could not fail.
      tact::detail::model_yield();
    }
    running[at] = false;
    if (broken != mutant::early_finish) q.finish();
  }

  void steal(int thief, int victim) {
    work_queue* const q = slot[victim].load(std::memory_order_relaxed);
    if (q == nullptr || q->looks_empty() || q->being_processed()) return;
    if (broken != mutant::one_cas) {
      tact::detail::try_swap(slot[thief], slot[victim], q);
      return;
    }
    work_queue* ours = slot[thief].load();  // the mutant: no null step
    work_queue* wanted = q;
    if (slot[victim].compare_exchange_strong(wanted, ours)) slot[thief].store(q);
  }

  bool done() const { return delivered == before_start + during; }

  // Called by the scheduler between steps, outside the threads: its loads
  // are no schedule points.
  std::string two_slots() {
    for (int a = 0; a < queues; ++a)
      for (int b = a + 1; b < queues; ++b) {
        work_queue* const q = slot[a].load();
        if (q != nullptr && q == slot[b].load()) return "a queue in two slots";
      }
    return {};
  }
};

using mutant = system::mutant;

std::string run_once(std::uint64_t seed, strategy how, mutant broken) {
  system s;
  s.broken = broken;
  for (int i = 0; i < before_start + during; ++i)
    s.letters[i] = i < before_start ? letter{0, i} : letter{1, i - before_start};
  for (int i = 0; i < before_start; ++i) s.post(0, s.letters[i]);
  scheduler threads{seed, how};
  threads.spawn([&] {
    while (!s.done()) {
      s.sweep(0);
      tact::detail::model_yield();
    }
  });
  threads.spawn([&] {
    while (!s.done()) {
      s.steal(1, 0);
      s.sweep(1);
      tact::detail::model_yield();
    }
  });
  threads.spawn([&] {
    for (int i = before_start; i < before_start + during; ++i) {
      s.post(0, s.letters[i]);
      s.steal(2, 1);
      s.sweep(2);
    }
    while (!s.done()) {
      s.steal(2, 1);
      s.sweep(2);
      tact::detail::model_yield();
    }
  });
  std::string failure = threads.run([&] { return s.two_slots(); });
  if (!failure.empty()) return failure;
  std::array<bool, queues> held{};
  for (auto& slot : s.slot) {
    work_queue* const q = slot.load();
    if (q == nullptr || held[static_cast<std::size_t>(q - s.queue.data())])
      return "at the end, a slot empty or a queue in two slots";
    held[static_cast<std::size_t>(q - s.queue.data())] = true;
  }
  return {};
}

const char* name_of(strategy how) { return how == strategy::random ? "random" : "pct"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3) {
    const strategy how = std::strcmp(argv[2], "pct") == 0 ? strategy::pct : strategy::random;
    const std::string failure =
        run_once(std::strtoull(argv[1], nullptr, 10), how, mutant::none);
    std::printf("%s\n", failure.empty() ? "holds" : failure.c_str());
    return failure.empty() ? 0 : 1;
  }
  constexpr std::uint64_t seeds = 5000;
  for (const strategy how : {strategy::random, strategy::pct}) {
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      if (const std::string failure = run_once(seed, how, mutant::none); !failure.empty()) {
        std::printf("FAILED: %s\nreplay: %s %llu %s\n", failure.c_str(), argv[0],
                    static_cast<unsigned long long>(seed), name_of(how));
        return 1;
      }
    }
    std::printf("%s schedules, seeds 1 to %llu: hold\n", name_of(how),
                static_cast<unsigned long long>(seeds));
  }
  // Each mutant must be caught by some schedule of each strategy.
  const std::pair<mutant, const char*> mutants[] = {
      {mutant::one_cas, "a swap without its null step"},
      {mutant::early_finish, "a queue let go before its batch is drained"}};
  for (const auto& [broken, what] : mutants)
    for (const strategy how : {strategy::random, strategy::pct}) {
      std::uint64_t seed = 1;
      std::string failure;
      for (; seed <= seeds && failure.empty(); ++seed) failure = run_once(seed, how, broken);
      if (failure.empty()) {
        std::printf("FAILED: no %s schedule catches %s\n", name_of(how), what);
        return 1;
      }
      std::printf("mutant, %s: caught by %s seed %llu (%s)\n", what, name_of(how),
                  static_cast<unsigned long long>(seed - 1), failure.c_str());
    }
  return 0;
}
