#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "mailbox/work_queue.hpp"
#include "support/tagged_envelope.hpp"
#include "support/test_support.hpp"

using tact::detail::envelope;
using tact::detail::work_queue;
using tact::test::producer_of;
using tact::test::seq_of;
using tact::test::tagged;

// Several consumers race to gulp one queue while producers post to it.
// being_processed must hand the batch from one consumer to the next: the
// per-producer expectations below are plain (non-atomic) data shared by
// the consumers, so an overlap or a missing happens-before edge shows up
// as an order violation here, or as a data race under ThreadSanitizer.
// With `cut`, a consumer runs at most that many envelopes of a batch and
// leaves the rest for the next gulp (a gulp budget), whoever makes it.
TEST_CASE("racing gulps process a queue one batch at a time, in post order per producer") {
  const int consumers = GENERATE(1, 2, 4);
  const std::uint64_t cut = GENERATE(0u, 3u);
  CAPTURE(consumers, cut);
  constexpr int producers = 4;
  const std::uint64_t per_producer = tact::test::scaled(200'000);
  work_queue q{16};

  std::vector<std::uint64_t> next(producers, 0);  // guarded by being_processed
  std::uint64_t received = 0;                     // likewise
  std::uint64_t order_violations = 0;             // likewise
  std::atomic<int> inside{0};
  std::atomic<std::uint64_t> overlaps{0};
  std::atomic<int> producers_done{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::uint64_t s = 0; s < per_producer; ++s)
        q.post(tagged(static_cast<std::uint64_t>(p), s));
      producers_done.fetch_add(1);
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      for (;;) {
        const bool last_look = producers_done.load() == producers;
        if (!q.looks_empty() && q.gulp() == work_queue::gulp_result::taken) {
          if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
          for (std::uint64_t ran = 0; !q.batch().empty() && (cut == 0 || ran < cut); ++ran) {
            const envelope e = q.batch().pop();
            const std::uint64_t p = producer_of(e);
            if (seq_of(e) != next[p]) ++order_violations;
            next[p] = seq_of(e) + 1;
            ++received;
          }
          inside.fetch_sub(1);
          if (q.batch().empty())
            q.finish();
          else
            (void)q.pause();
        } else if (last_look && q.looks_empty()) {
          return;
        }
      }
    });
  for (std::thread& t : threads) t.join();

  CHECK(overlaps.load() == 0);
  CHECK(order_violations == 0);
  CHECK(received == producers * per_producer);
  for (std::uint64_t n : next) CHECK(n == per_producer);
}

// allocate_here (a worker allocating its queues' arrays on its own NUMA
// node as it starts) may meet a queue another thread has just processed:
// it takes the batch only when being_processed reads false, and must then
// see all that thread did to the batch, as a gulp does. Here one thread
// processes two large batches, then two small ones, and so on, so that each
// small one lands in a large array and shrinks it (recycle writes the
// batch's capacity; the two arrays take turns), and after each lets the other
// thread allocate twice before it posts again: the queue's lock then
// orders nothing between the shrink and the allocation. Under
// ThreadSanitizer a missing happens-before edge is a data race. The two
// threads pace each other through relaxed counters, which order nothing.
// Only ThreadSanitizer can fail this test (on x86 the race corrupts
// nothing the checks below would see); the plain run checks the traffic.
TEST_CASE("allocate_here sees the batch as its last processor left it") {
  const std::uint64_t batches = tact::test::scaled(2'000);
  const auto size_of = [](std::uint64_t batch) -> std::uint64_t {
    return batch / 2 % 2 == 0 ? 8 : 1;
  };
  work_queue q{1};
  std::uint64_t received = 0;  // the processor's
  std::atomic<std::uint64_t> allocations{0};
  std::atomic<bool> processing_done{false};

  std::thread processor([&] {
    for (std::uint64_t b = 0; b < batches; ++b) {
      for (std::uint64_t s = 0; s < size_of(b); ++s) q.post(tagged(0, s));
      if (q.gulp() != work_queue::gulp_result::taken) break;
      while (!q.batch().empty()) {
        q.batch().pop();
        ++received;
      }
      q.finish();
      const std::uint64_t seen = allocations.load(std::memory_order_relaxed);
      while (allocations.load(std::memory_order_relaxed) < seen + 2) std::this_thread::yield();
    }
    processing_done.store(true, std::memory_order_relaxed);
  });
  while (!processing_done.load(std::memory_order_relaxed)) {
    q.allocate_here();
    allocations.fetch_add(1, std::memory_order_relaxed);
  }
  processor.join();

  std::uint64_t sent = 0;
  for (std::uint64_t b = 0; b < batches; ++b) sent += size_of(b);
  CHECK(received == sent);
  CHECK(q.looks_empty());
}
