// The two-CAS queue-pointer swap (Cforall thesis) under fire: threads that are
// workers and thieves at once gulp their own slots, steal random slots of
// others, and post to random queues, all at the same time.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "executor/queue_swap.hpp"
#include "mailbox/work_queue.hpp"
#include "support/padded.hpp"
#include "support/tagged_envelope.hpp"
#include "support/test_support.hpp"

using tact::detail::envelope;
using tact::detail::padded;
using tact::detail::try_swap;
using tact::detail::work_queue;
using tact::test::producer_of;
using tact::test::seq_of;
using tact::test::tagged;

namespace {


// A work queue plus what the test checks about it. `next` (per producer)
// is plain data touched only while processing: a second thread inside at
// the same time, or a missing happens-before edge between consecutive
// processors, shows up as an order error or a ThreadSanitizer report.
struct checked_queue : work_queue {
  explicit checked_queue(std::uint32_t producers) : work_queue{4}, next(producers, 0) {}
  std::atomic<int> processor{-1};
  std::vector<std::uint64_t> next;
  std::uint64_t processed = 0;
};

struct rig {
  rig(std::uint32_t threads, std::uint32_t slots_per_thread)
      : threads{threads}, per_thread{slots_per_thread}, slots(threads * slots_per_thread) {
    for (std::uint32_t i = 0; i < threads * slots_per_thread; ++i) {
      queues.push_back(std::make_unique<padded<checked_queue>>(threads));
      slots[i].store(queues.back().get());
    }
  }

  // Gulps and drains one queue, as worker::sweep and worker::process do.
  void process(int me, checked_queue& q) {
    if (q.gulp() != work_queue::gulp_result::taken) return;
    if (q.processor.exchange(me) != -1) overlaps.fetch_add(1);
    while (!q.batch().empty()) {
      const envelope e = q.batch().front();
      q.batch().drop_front();
      if (seq_of(e) != q.next[producer_of(e)]) order_errors.fetch_add(1);
      q.next[producer_of(e)] = seq_of(e) + 1;
      ++q.processed;
    }
    q.processor.store(-1);
    q.finish();
  }

  // One steal attempt on a random slot of a random other thread.
  void steal(std::uint32_t me, std::uint64_t& rng) {
    const std::uint32_t victim = (me + 1 + static_cast<std::uint32_t>(rng % (threads - 1))) % threads;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    std::atomic<work_queue*>& theirs = slots[victim * per_thread + (rng >> 33) % per_thread];
    std::atomic<work_queue*>& mine = slots[me * per_thread + (rng >> 40) % per_thread];
    work_queue* const wanted = theirs.load(std::memory_order_relaxed);
    if (wanted == nullptr) return;  // mid-swap
    if (try_swap(mine, theirs, wanted)) swaps.fetch_add(1, std::memory_order_relaxed);
  }

  const std::uint32_t threads;
  const std::uint32_t per_thread;
  std::vector<std::unique_ptr<padded<checked_queue>>> queues;
  std::vector<std::atomic<work_queue*>> slots;
  std::atomic<std::uint64_t> overlaps{0};
  std::atomic<std::uint64_t> order_errors{0};
  std::atomic<std::uint64_t> swaps{0};
};

}  // namespace

TEST_CASE("swapping queue pointers loses none, duplicates none, and never lets two threads process "
          "one queue") {
  const std::uint32_t threads = GENERATE(2u, 3u, 8u);
  const std::uint32_t per_thread = GENERATE(1u, 4u);
  const std::uint64_t rounds = tact::test::scaled(200'000);
  CAPTURE(threads, per_thread, rounds);
  rig r{threads, per_thread};
  const std::uint32_t queue_count = threads * per_thread;
  std::vector<std::uint64_t> posted_by(threads, 0);

  std::vector<std::thread> pool;
  for (std::uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&r, &posted_by, t, queue_count, rounds] {
      std::uint64_t rng = 0x9E3779B97F4A7C15ull * (t + 1);
      // Per queue, this producer's next sequence number.
      std::vector<std::uint64_t> seq(queue_count, 0);
      for (std::uint64_t round = 0; round < rounds; ++round) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const std::uint32_t target = static_cast<std::uint32_t>((rng >> 33) % queue_count);
        r.queues[target]->post(tagged(t, seq[target]++));
        ++posted_by[t];
        // Our own slots: never null, since only we null them.
        for (std::uint32_t s = 0; s < r.per_thread; ++s) {
          work_queue* own = r.slots[t * r.per_thread + s].load(std::memory_order_relaxed);
          if (own == nullptr) r.order_errors.fetch_add(1);  // would break the invariant
          else r.process(static_cast<int>(t), static_cast<checked_queue&>(*own));
        }
        if (round % 3 == 0) r.steal(t, rng);
      }
    });
  for (std::thread& th : pool) th.join();

  // Every queue appears in exactly one slot.
  std::vector<int> seen(queue_count, 0);
  for (auto& s : r.slots) {
    work_queue* q = s.load();
    REQUIRE(q != nullptr);
    for (std::uint32_t i = 0; i < queue_count; ++i)
      if (static_cast<work_queue*>(r.queues[i].get()) == q) ++seen[i];
  }
  for (int n : seen) CHECK(n == 1);

  // Drain what is left; every post was processed exactly once, in order.
  for (auto& q : r.queues) r.process(0, *q);
  std::uint64_t processed = 0;
  for (auto& q : r.queues) processed += q->processed;
  std::uint64_t posted = 0;
  for (std::uint64_t p : posted_by) posted += p;
  CHECK(processed == posted);
  CHECK(r.overlaps.load() == 0);
  CHECK(r.order_errors.load() == 0);
  CHECK(r.swaps.load() > 0);
}
