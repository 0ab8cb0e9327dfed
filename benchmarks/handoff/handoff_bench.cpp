// Hand-off micro-benchmarks: the engine's two hand-offs between threads
// against the Boost.Lockfree structures that could take their place
// (docs/design.md, "Boost.Lockfree"). Each checks that every item arrives
// exactly once and in its producer's order, and fails loudly otherwise.
//
// The mailbox: envelopes (three words) from producer threads to one
// consumer, as a sponsor's queue gets them from workers and as a work
// queue gets posts from threads outside the pool.
//   handoff_mailbox_ours                 work_queue::post; the consumer
//                                        looks, gulps (lock, swap) and
//                                        drains the batch.
//   handoff_mailbox_lockfree_queue       boost::lockfree::queue, node-based
//                                        (4,096 nodes reserved, more
//                                        allocated when they run out):
//                                        push; pop one by one.
//   handoff_mailbox_lockfree_queue_fixed the same, fixed_sized with room for
//                                        4,096: a producer that finds it
//                                        full backs off and retries
//                                        (full_per_msg counts the misses).
//   handoff_mailbox_spsc_queue           boost::lockfree::spsc_queue, room
//                                        for 4,096, one producer only:
//                                        push (retrying when full);
//                                        consume_all.
// The timer inbox: records, each a separate object with a link field,
// from producer threads to one consumer that takes them all at once,
// oldest first, as the timer thread takes timers started and cancelled.
//   handoff_inbox_ours                   intrusive_inbox: one CAS per push,
//                                        one exchange per take.
//   handoff_inbox_lockfree_stack         boost::lockfree::stack<record*>,
//                                        node-based (4,096 reserved): push;
//                                        consume_all_atomic_reversed.
//   handoff_inbox_lockfree_stack_fixed   the same, fixed_sized for 4,096,
//                                        retrying when full.
//
// Throughput (`producers:1` and `producers:2`): each iteration hands
// 65,536 items over, split among the producers, which run on threads kept
// across iterations; per_msg is wall-clock time per item. Latency
// (handoff_latency_*): one item there and back between the benchmark
// thread and an echo thread through two of the structure, 10,000 round
// trips per iteration; per_msg is the mean time per round trip, and
// rtt_median_ns and rtt_p90_ns come from timing each round trip alone
// (steady_clock, whose own cost is in every figure alike), so that a
// round trip the OS preempted does not weigh on the median. A side with
// nothing to take, or a full structure to push into, spins briefly and
// then yields, the same back-off everywhere. The wake-up of a sleeping
// consumer is left out: each structure would need one (see the design).
//
// The load average at the start is recorded in the output's context
// (load_at_start); summary.py prints it with the one at the end.
#include <benchmark/benchmark.h>

#include "support/gbench_report.hpp"

#include <algorithm>
#include <atomic>
#include <boost/lockfree/policies.hpp>
#include <boost/lockfree/queue.hpp>
#include <boost/lockfree/spsc_queue.hpp>
#include <boost/lockfree/stack.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <tact/defaults.hpp>

#include "mailbox/work_queue.hpp"
#include "support/cpu_relax.hpp"
#include "support/intrusive_inbox.hpp"
#include "support/padded.hpp"

namespace {

using tact::bench::fail_unless;
using tact::detail::envelope;

constexpr std::uint64_t round_items = 65'536;
constexpr std::uint64_t round_trips = 10'000;
// Room of the fixed-size structures, and nodes reserved by the others.
constexpr std::size_t room = 4'096;

// Spin a little, then yield: with more threads than cores the other side
// may not be running at all.
class backoff {
 public:
  void pause() noexcept {
    if (spins_ < 128) {
      ++spins_;
      tact::detail::cpu_relax();
    } else {
      tact::detail::yield_thread();
    }
  }
  void reset() noexcept { spins_ = 0; }

 private:
  unsigned spins_ = 0;
};

// An item: producer p's sequence number seq, carried in an envelope's
// target word.
constexpr int seq_bits = 48;
envelope tagged(std::uint64_t p, std::uint64_t seq) noexcept {
  return envelope{reinterpret_cast<void*>((p << seq_bits) | seq), nullptr, nullptr};
}
std::uint64_t producer_of(const envelope& e) noexcept {
  return reinterpret_cast<std::uintptr_t>(e.target) >> seq_bits;
}
std::uint64_t seq_of(const envelope& e) noexcept {
  return reinterpret_cast<std::uintptr_t>(e.target) & ((std::uint64_t{1} << seq_bits) - 1);
}

// ---- the mailbox ----

class mailbox_ours {
 public:
  mailbox_ours(unsigned /*producers*/, std::uint64_t /*slots*/) {}
  void push(unsigned p, std::uint64_t seq) { (void)queue_.post(tagged(p, seq)); }
  template <class Take>
  std::uint64_t drain(Take&& take) {
    using tact::detail::work_queue;
    if (queue_.looks_empty() || queue_.gulp() != work_queue::gulp_result::taken) return 0;
    std::uint64_t n = 0;
    for (tact::detail::copy_queue& batch = queue_.batch(); !batch.empty(); ++n) {
      const envelope e = batch.pop();
      take(producer_of(e), seq_of(e));
    }
    queue_.finish();
    return n;
  }
  std::uint64_t fulls() const noexcept { return 0; }

 private:
  tact::detail::padded<tact::detail::work_queue> queue_{tact::defaults::copy_queue_floor};
};

template <bool Fixed>
class mailbox_lockfree_queue {
 public:
  mailbox_lockfree_queue(unsigned /*producers*/, std::uint64_t /*slots*/) {}
  void push(unsigned p, std::uint64_t seq) {
    const envelope e = tagged(p, seq);
    if constexpr (Fixed) {
      for (backoff wait; !queue_.bounded_push(e); wait.pause())
        fulls_.fetch_add(1, std::memory_order_relaxed);
    } else if (!queue_.push(e)) {
      throw std::bad_alloc{};
    }
  }
  template <class Take>
  std::uint64_t drain(Take&& take) {
    std::uint64_t n = 0;
    for (envelope e{}; queue_.pop(e); ++n) take(producer_of(e), seq_of(e));
    return n;
  }
  std::uint64_t fulls() const noexcept { return fulls_.load(std::memory_order_relaxed); }

 private:
  using queue_type =
      std::conditional_t<Fixed,
                         boost::lockfree::queue<envelope, boost::lockfree::fixed_sized<true>>,
                         boost::lockfree::queue<envelope>>;
  queue_type queue_{room};
  std::atomic<std::uint64_t> fulls_{0};
};

class mailbox_spsc_queue {
 public:
  mailbox_spsc_queue(unsigned producers, std::uint64_t /*slots*/) {
    fail_unless(producers == 1, "an spsc_queue takes one producer");
  }
  void push(unsigned p, std::uint64_t seq) {
    const envelope e = tagged(p, seq);
    for (backoff wait; !queue_.push(e); wait.pause())
      fulls_.fetch_add(1, std::memory_order_relaxed);
  }
  template <class Take>
  std::uint64_t drain(Take&& take) {
    return queue_.consume_all([&](const envelope& e) { take(producer_of(e), seq_of(e)); });
  }
  std::uint64_t fulls() const noexcept { return fulls_.load(std::memory_order_relaxed); }

 private:
  boost::lockfree::spsc_queue<envelope> queue_{room};
  std::atomic<std::uint64_t> fulls_{0};
};

// ---- the timer inbox ----

// A timer record stand-in: an object of its own with a link field.
struct alignas(64) record {
  std::uint64_t producer = 0;
  std::uint64_t seq = 0;
  record* next = nullptr;
};

// `slots` records per producer, reused: producer p's item seq is its
// record seq % slots, which the harness never reuses while still queued.
class record_pool {
 public:
  record_pool(unsigned producers, std::uint64_t slots)
      : records_(producers * slots), slots_{slots} {}
  record* fill(unsigned p, std::uint64_t seq) noexcept {
    record& r = records_[p * slots_ + seq % slots_];
    r.producer = p;
    r.seq = seq;
    return &r;
  }

 private:
  std::vector<record> records_;
  std::uint64_t slots_;
};

class inbox_ours {
 public:
  inbox_ours(unsigned producers, std::uint64_t slots) : records_{producers, slots} {}
  // The engine rings its consumer when push() returns true.
  void push(unsigned p, std::uint64_t seq) { (void)inbox_.push(records_.fill(p, seq)); }
  template <class Take>
  std::uint64_t drain(Take&& take) {
    std::uint64_t n = 0;
    for (record* r = inbox_.take_all(); r != nullptr; ++n) {
      // Read before take(), which may let the producer reuse the record.
      const std::uint64_t p = r->producer;
      const std::uint64_t seq = r->seq;
      r = std::exchange(r->next, nullptr);  // unlinked, as the timer thread does
      take(p, seq);
    }
    return n;
  }
  std::uint64_t fulls() const noexcept { return 0; }

 private:
  record_pool records_;
  tact::detail::intrusive_inbox<record, &record::next> inbox_;
};

template <bool Fixed>
class inbox_lockfree_stack {
 public:
  inbox_lockfree_stack(unsigned producers, std::uint64_t slots) : records_{producers, slots} {}
  void push(unsigned p, std::uint64_t seq) {
    record* const r = records_.fill(p, seq);
    if constexpr (Fixed) {
      for (backoff wait; !stack_.bounded_push(r); wait.pause())
        fulls_.fetch_add(1, std::memory_order_relaxed);
    } else if (!stack_.push(r)) {
      throw std::bad_alloc{};
    }
  }
  template <class Take>
  std::uint64_t drain(Take&& take) {
    return stack_.consume_all_atomic_reversed([&](record* r) {
      const std::uint64_t p = r->producer;
      const std::uint64_t seq = r->seq;
      take(p, seq);
    });
  }
  std::uint64_t fulls() const noexcept { return fulls_.load(std::memory_order_relaxed); }

 private:
  using stack_type =
      std::conditional_t<Fixed, boost::lockfree::stack<record*, boost::lockfree::fixed_sized<true>>,
                         boost::lockfree::stack<record*>>;
  record_pool records_;
  stack_type stack_{room};
  std::atomic<std::uint64_t> fulls_{0};
};

// ---- the harness ----

// Producer threads kept across iterations: each round, producer p runs
// body(p, round) once.
class crew {
 public:
  crew(unsigned producers, std::function<void(unsigned, std::uint32_t)> body)
      : body_{std::move(body)} {
    for (unsigned p = 0; p < producers; ++p) threads_.emplace_back([this, p] { run(p); });
  }
  ~crew() {
    stopping_.store(true, std::memory_order_relaxed);
    start();
    for (std::thread& t : threads_) t.join();
  }
  crew(const crew&) = delete;
  crew& operator=(const crew&) = delete;

  void start() {
    round_.fetch_add(1, std::memory_order_release);
    round_.notify_all();
  }
  // Until every producer has finished the rounds started so far.
  void await() const {
    const std::uint64_t all =
        std::uint64_t{round_.load(std::memory_order_relaxed)} * threads_.size();
    for (backoff wait; finished_.load(std::memory_order_acquire) != all;) wait.pause();
  }

 private:
  void run(unsigned p) {
    for (std::uint32_t seen = 0;;) {
      round_.wait(seen, std::memory_order_acquire);
      seen = round_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_relaxed)) return;
      body_(p, seen - 1);
      finished_.fetch_add(1, std::memory_order_release);
    }
  }

  std::function<void(unsigned, std::uint32_t)> body_;
  std::atomic<std::uint32_t> round_{0};
  std::atomic<std::uint64_t> finished_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

// The consumer's check: each producer's items once each, in order.
struct order_check {
  explicit order_check(unsigned producers) : next(producers, 0) {}
  void operator()(std::uint64_t p, std::uint64_t seq) noexcept {
    ++received;
    if (p >= next.size() || seq != next[p]) {
      ++wrong;
      if (p >= next.size()) return;
    }
    next[p] = seq + 1;
  }
  std::vector<std::uint64_t> next;
  std::uint64_t received = 0;
  std::uint64_t wrong = 0;
};

template <class Channel>
void throughput(benchmark::State& state) {
  const auto producers = static_cast<unsigned>(state.range(0));
  const std::uint64_t share = round_items / producers;
  Channel channel{producers, share};
  crew team{producers, [&](unsigned p, std::uint32_t round) {
              for (std::uint64_t i = 0; i < share; ++i) channel.push(p, round * share + i);
            }};
  order_check check{producers};
  for (auto _ : state) {
    team.start();
    backoff wait;
    for (std::uint64_t got = 0; got < producers * share;) {
      const std::uint64_t n = channel.drain(check);
      got += n;
      if (n == 0)
        wait.pause();
      else
        wait.reset();
    }
    team.await();
  }
  const std::uint64_t total = state.iterations() * producers * share;
  fail_unless(check.wrong == 0 && check.received == total,
              "a hand-off lost, duplicated or reordered an item");
  tact::bench::report_per_message(state, producers * share);
  state.counters["full_per_msg"] =
      static_cast<double>(channel.fulls()) / static_cast<double>(total);
}

// Round trip times in buckets of 4 ns, the last one for everything from
// 64 us on: no allocation while timing.
class rtt_histogram {
 public:
  void add(std::chrono::nanoseconds rtt) noexcept {
    const auto bucket = static_cast<std::uint64_t>(rtt.count()) / width;
    ++counts_[std::min<std::uint64_t>(bucket, counts_.size() - 1)];
    ++total_;
  }
  // The round trip time that a fraction q of them did not exceed, in ns.
  double quantile(double q) const noexcept {
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen > rank) return static_cast<double>((b + 1) * width);
    }
    return static_cast<double>(counts_.size() * width);
  }

 private:
  static constexpr std::uint64_t width = 4;
  std::vector<std::uint64_t> counts_ = std::vector<std::uint64_t>(16'384, 0);
  std::uint64_t total_ = 0;
};

template <class Channel>
void latency(benchmark::State& state) {
  Channel there{1, 1};
  Channel back{1, 1};
  std::atomic<bool> stopping{false};
  std::thread echo{[&] {
    backoff wait;
    for (;;) {
      if (there.drain([&](std::uint64_t p, std::uint64_t seq) {
            back.push(static_cast<unsigned>(p), seq);
          }) > 0) {
        wait.reset();
      } else if (stopping.load(std::memory_order_relaxed)) {
        return;
      } else {
        wait.pause();
      }
    }
  }};
  std::uint64_t seq = 0;
  std::uint64_t wrong = 0;
  rtt_histogram rtt;
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < round_trips; ++i, ++seq) {
      const auto sent = std::chrono::steady_clock::now();
      there.push(0, seq);
      const auto check = [&](std::uint64_t p, std::uint64_t s) { wrong += p != 0 || s != seq; };
      for (backoff wait; back.drain(check) == 0;) wait.pause();
      rtt.add(std::chrono::steady_clock::now() - sent);
    }
  }
  stopping.store(true, std::memory_order_relaxed);
  echo.join();
  fail_unless(wrong == 0, "a round trip came back with another item");
  tact::bench::report_per_message(state, round_trips);
  state.counters["rtt_median_ns"] = rtt.quantile(0.5);
  state.counters["rtt_p90_ns"] = rtt.quantile(0.9);
}

std::string load_average() {
  std::ifstream file{"/proc/loadavg"};
  std::string line;
  std::getline(file, line);
  return line.empty() ? "unknown" : line;
}

template <class Channel>
void register_throughput(const char* name, bool one_producer_only) {
  auto* b = benchmark::RegisterBenchmark(name, &throughput<Channel>);
  b->ArgName("producers")->Arg(1);
  if (!one_producer_only) b->Arg(2);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

template <class Channel>
void register_latency(const char* name) {
  benchmark::RegisterBenchmark(name, &latency<Channel>)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("load_at_start", load_average());

  register_throughput<mailbox_ours>("handoff_mailbox_ours", false);
  register_throughput<mailbox_lockfree_queue<false>>("handoff_mailbox_lockfree_queue", false);
  register_throughput<mailbox_lockfree_queue<true>>("handoff_mailbox_lockfree_queue_fixed", false);
  register_throughput<mailbox_spsc_queue>("handoff_mailbox_spsc_queue", true);
  register_throughput<inbox_ours>("handoff_inbox_ours", false);
  register_throughput<inbox_lockfree_stack<false>>("handoff_inbox_lockfree_stack", false);
  register_throughput<inbox_lockfree_stack<true>>("handoff_inbox_lockfree_stack_fixed", false);

  register_latency<mailbox_ours>("handoff_latency_mailbox_ours");
  register_latency<mailbox_lockfree_queue<false>>("handoff_latency_mailbox_lockfree_queue");
  register_latency<mailbox_spsc_queue>("handoff_latency_mailbox_spsc_queue");
  register_latency<inbox_ours>("handoff_latency_inbox_ours");
  register_latency<inbox_lockfree_stack<false>>("handoff_latency_inbox_lockfree_stack");

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
