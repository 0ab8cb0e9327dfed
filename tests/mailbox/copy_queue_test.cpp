#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>

#include "mailbox/copy_queue.hpp"
#include "support/test_support.hpp"

using tact::detail::copy_queue;
using tact::detail::envelope;

namespace {

envelope numbered(std::uintptr_t n) {
  return envelope{reinterpret_cast<void*>(n), nullptr, nullptr};
}
std::uintptr_t number_of(const envelope& e) { return reinterpret_cast<std::uintptr_t>(e.target); }

// One gulp's worth: push n, drain, recycle; returns false if order broke.
bool round_trip(copy_queue& q, std::uintptr_t n) {
  for (std::uintptr_t i = 0; i < n; ++i) q.push(numbered(i));
  bool in_order = true;
  for (std::uintptr_t i = 0; i < n; ++i) in_order = in_order && number_of(q.pop()) == i;
  in_order = in_order && q.empty();
  q.recycle();
  return in_order;
}

}  // namespace

TEST_CASE("a copy queue allocates nothing until its first push") {
  copy_queue q{16};
  CHECK(q.capacity() == 0);
  CHECK(q.empty());
  q.push(numbered(1));
  CHECK(q.capacity() == 16);
  CHECK(q.size() == 1);
}

TEST_CASE("a copy queue pops envelopes in the order they were pushed") {
  copy_queue q{4};
  for (int round = 0; round < 3; ++round) REQUIRE(round_trip(q, 1000));
}

TEST_CASE("a copy queue grows by chunks that double from its floor") {
  copy_queue q{10};
  for (std::uintptr_t i = 0; i < 10; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 10);
  q.push(numbered(10));
  CHECK(q.capacity() == 10 + 20);
  for (std::uintptr_t i = 11; i < 31; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 10 + 20 + 40);
  for (std::uintptr_t i = 0; i < 31; ++i) REQUIRE(number_of(q.pop()) == i);
}

TEST_CASE("a copy queue's chunks stop doubling at chunk_most") {
  copy_queue q{copy_queue::chunk_most};
  const std::uintptr_t n = 5 * copy_queue::chunk_most + 1;
  for (std::uintptr_t i = 0; i < n; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 6 * copy_queue::chunk_most);
  for (std::uintptr_t i = 0; i < n; ++i) REQUIRE(number_of(q.pop()) == i);
}

// What the chunks are for: memory held is about what waits, not the
// largest burst. A queue drained while it is filled (a batch that feeds
// itself, or a mailbox and its batch taking turns) holds the drained
// chunks no longer than it takes to drain them.
TEST_CASE("a copy queue drained while it fills holds about what waits in it") {
  copy_queue q{16};
  constexpr std::uintptr_t waiting = 10 * copy_queue::chunk_most;
  std::uintptr_t pushed = 0;
  std::uintptr_t popped = 0;
  for (; pushed < waiting; ++pushed) q.push(numbered(pushed));
  for (int i = 0; i < 50; ++i) {
    for (std::uintptr_t k = 0; k < waiting / 2; ++k) REQUIRE(number_of(q.pop()) == popped++);
    for (std::uintptr_t k = 0; k < waiting / 2; ++k) q.push(numbered(pushed++));
    // What waits, plus the last chunk's unused part, the head chunk's
    // drained part and the spare: at most three chunks more.
    REQUIRE(q.capacity() <= waiting + 3 * copy_queue::chunk_most);
    REQUIRE(q.size() == pushed - popped);
  }
  while (!q.empty()) REQUIRE(number_of(q.pop()) == popped++);
  CHECK(popped == pushed);
}

TEST_CASE("an empty copy queue rewinds into its chunk instead of growing") {
  copy_queue q{8};
  for (std::uintptr_t i = 0; i < 1000; ++i) {
    q.push(numbered(i));
    REQUIRE(number_of(q.pop()) == i);
  }
  CHECK(q.capacity() == 8);
}

// The thesis's example: with "reclaim one slot per gulp" alone, a queue that
// never holds more than 19 messages shrinks from 20 to 18 and then doubles
// to 36. Reclaiming only while less than half is used prevents it.
TEST_CASE("a copy queue that peaks at 19 of 20 slots never grows") {
  copy_queue q{20};
  REQUIRE(round_trip(q, 19));
  REQUIRE(q.capacity() == 20);
  for (int gulp = 0; gulp < 100; ++gulp) {
    REQUIRE(round_trip(q, 19));
    REQUIRE(q.capacity() == 20);
  }
}

TEST_CASE("after a burst, a copy queue keeps one chunk and shrinks it toward its floor") {
  copy_queue q{16};
  REQUIRE(round_trip(q, 50'000));
  // Drained: the last chunk is left, and the spare, which the next batch
  // that fits in one chunk gives back.
  CHECK(q.capacity() <= 2 * copy_queue::chunk_most);
  std::uint32_t previous = q.capacity();
  for (int gulp = 0; gulp < 200; ++gulp) {
    REQUIRE(round_trip(q, 3));
    REQUIRE(q.capacity() <= previous);
    REQUIRE(q.capacity() >= 16);
    previous = q.capacity();
  }
  REQUIRE(q.capacity() == 16);
  // Back at its floor, batches that fill it keep it as it is.
  for (int gulp = 0; gulp < 10; ++gulp) {
    REQUIRE(round_trip(q, 16));
    REQUIRE(round_trip(q, 1));
  }
  CHECK(q.capacity() == 16);
}

// A queue whose batches vary (seven small ones, then one of forty: a
// sharded queue of a few actors, some of which are busy now and then)
// settles on a chunk that holds the larger batch and keeps it. Shrinking
// under every small batch made it reallocate at nearly every batch,
// shrinking for the small ones and growing again for the large one.
TEST_CASE("a copy queue whose batches vary settles and stops reallocating") {
  copy_queue q{16};
  const auto cycle = [&q] {
    bool in_order = round_trip(q, 40);
    for (int small = 0; small < 7; ++small) in_order = round_trip(q, 4) && in_order;
    return in_order;
  };
  for (int warm = 0; warm < 2; ++warm) REQUIRE(cycle());
  const std::uint32_t settled = q.capacity();
  for (int again = 0; again < 50; ++again) {
    REQUIRE(round_trip(q, 40));
    REQUIRE(q.capacity() == settled);
    for (int small = 0; small < 7; ++small) {
      REQUIRE(round_trip(q, 4));
      REQUIRE(q.capacity() == settled);
    }
  }
  CHECK(settled < 2 * 40 + 16);  // the larger batch's chunk, and no spare kept
}

TEST_CASE("after a burst, a steady load settles without ever growing again") {
  copy_queue q{16};
  REQUIRE(round_trip(q, 1000));
  std::uint32_t previous = q.capacity();
  for (int gulp = 0; gulp < 200; ++gulp) {
    REQUIRE(round_trip(q, 100));
    REQUIRE(q.capacity() <= previous);  // shrinking never forces a regrowth
    previous = q.capacity();
  }
  // Settles where 100 messages use at least half of the chunk.
  CHECK(q.capacity() > 100);
  CHECK(q.capacity() <= 200);
}

TEST_CASE("a copy queue counts and reads its envelopes across chunks") {
  copy_queue q{4};
  for (std::uintptr_t i = 0; i < 50; ++i) {
    q.push(numbered(i));
    REQUIRE(q.size() == i + 1);
  }
  for (std::uintptr_t i = 0; i < 7; ++i) REQUIRE(number_of(q.pop()) == i);
  REQUIRE(q.size() == 43);
  for (std::uint32_t i = 0; i < q.size(); ++i) REQUIRE(number_of(q.at(i)) == i + 7);
  for (std::uintptr_t i = 7; i < 50; ++i) {
    REQUIRE(q.size() == 50 - i);
    REQUIRE(number_of(q.pop()) == i);
  }
  CHECK(q.size() == 0);
  CHECK(q.empty());
}

TEST_CASE("swapping copy queues exchanges their contents") {
  copy_queue a{4};
  copy_queue b{4};
  a.push(numbered(7));
  a.push(numbered(8));
  a.swap(b);
  CHECK(a.empty());
  REQUIRE(b.size() == 2);
  CHECK(number_of(b.pop()) == 7);
  CHECK(number_of(b.pop()) == 8);
}

TEST_CASE("a push with backup chunks at hand uses them only where an allocation fails") {
  // Allocations do not fail here, so the backup chunks stay: the chain
  // grows as it would without them. (tests/faults covers a failing
  // allocation.)
  copy_queue q{2};
  copy_queue::backup chunks;
  chunks.grow();
  chunks.grow();
  CHECK(chunks.size() == 2);
  for (std::uintptr_t i = 0; i < 10; ++i) q.push(numbered(i), chunks);
  CHECK(chunks.size() == 2);
  bool in_order = true;
  for (std::uintptr_t i = 0; i < 10; ++i) in_order = in_order && number_of(q.pop()) == i;
  CHECK(in_order);
}

TEST_CASE("envelopes put in front of a copy queue come out first, the last of them first") {
  SECTION("into a queue that has never had a chunk") {
    copy_queue q{4};
    const envelope stack[] = {numbered(3), numbered(2), numbered(1)};
    q.push_front(stack, 3);
    REQUIRE(q.size() == 3);
    for (std::uintptr_t i = 1; i <= 3; ++i) CHECK(number_of(q.pop()) == i);
    CHECK(q.empty());
  }
  SECTION("into the slots its head has left behind: no new chunk") {
    copy_queue q{8};
    for (std::uintptr_t i = 0; i < 6; ++i) q.push(numbered(i));
    for (std::uintptr_t i = 0; i < 4; ++i) q.pop();
    const envelope stack[] = {numbered(13), numbered(12), numbered(11)};
    q.push_front(stack, 3);
    CHECK(q.capacity() == 8);
    REQUIRE(q.size() == 5);
    const std::uintptr_t expected[] = {11, 12, 13, 4, 5};
    for (std::uint32_t i = 0; i < 5; ++i) CHECK(number_of(q.at(i)) == expected[i]);
    for (const std::uintptr_t e : expected) CHECK(number_of(q.pop()) == e);
    CHECK(q.empty());
  }
  SECTION("past them, into a chunk before the first, across a chain") {
    copy_queue q{2};
    for (std::uintptr_t i = 0; i < 20; ++i) q.push(numbered(i));  // chunks of 2, 4, 8, 16
    q.pop();
    envelope stack[40];
    for (std::uintptr_t i = 0; i < 40; ++i) stack[i] = numbered(1000 - i);
    q.push_front(stack, 40);
    REQUIRE(q.size() == 59);
    std::uint32_t wrong = 0;
    for (std::uintptr_t i = 0; i < 40; ++i)
      wrong += number_of(q.at(static_cast<std::uint32_t>(i))) != 961 + i;
    for (std::uintptr_t i = 1; i < 20; ++i)
      wrong += number_of(q.at(static_cast<std::uint32_t>(39 + i))) != i;
    CHECK(wrong == 0);
    for (std::uintptr_t i = 0; i < 40; ++i) wrong += number_of(q.pop()) != 961 + i;
    for (std::uintptr_t i = 1; i < 20; ++i) wrong += number_of(q.pop()) != i;
    CHECK(wrong == 0);
    CHECK(q.empty());
    q.recycle();
    CHECK(round_trip(q, 100));
  }
}

// Against a deque: pushes at either end, pops, and drained queues recycled,
// in a random mix (replayable by its seed).
TEST_CASE("a copy queue taking envelopes at both ends keeps the order a deque keeps") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    copy_queue q{static_cast<std::uint32_t>(1 + seed % 5)};
    std::deque<std::uintptr_t> model;
    std::uintptr_t next = 0;
    std::uint64_t wrong = 0;
    for (std::uint64_t step = 0; step < 3'000; ++step) {
      const std::uint64_t r = tact::test::mix(seed, step);
      switch (r % 4) {
        case 0: {
          envelope stack[copy_queue::chunk_most];
          const auto n = static_cast<std::uint32_t>((r >> 8) % 70);
          for (std::uint32_t i = 0; i < n; ++i) stack[i] = numbered(next + i);
          q.push_front(stack, n);
          for (std::uint32_t i = 0; i < n; ++i) model.push_front(next + i);
          next += n;
          break;
        }
        case 1:
          for (std::uint64_t i = 0; i < (r >> 8) % 40; ++i) {
            q.push(numbered(next));
            model.push_back(next++);
          }
          break;
        default:
          for (std::uint64_t i = 0; i < (r >> 8) % 50 && !model.empty(); ++i) {
            wrong += number_of(q.pop()) != model.front();
            model.pop_front();
          }
          if (model.empty()) q.recycle();
      }
      wrong += q.size() != model.size();
      if (!model.empty())
        wrong += number_of(q.at(static_cast<std::uint32_t>(model.size() / 2))) !=
                 model[model.size() / 2];
    }
    CHECK(wrong == 0);
  }
}
