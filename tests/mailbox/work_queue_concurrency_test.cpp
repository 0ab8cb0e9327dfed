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
TEST_CASE("racing gulps process a queue one batch at a time, in post order per producer") {
  const int consumers = GENERATE(1, 2, 4);
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
          while (!q.batch().empty()) {
            const envelope e = q.batch().pop();
            const std::uint64_t p = producer_of(e);
            if (seq_of(e) != next[p]) ++order_violations;
            next[p] = seq_of(e) + 1;
            ++received;
          }
          inside.fetch_sub(1);
          q.finish();
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
