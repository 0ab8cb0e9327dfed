#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/intrusive_inbox.hpp"
#include "support/test_support.hpp"

// The timer thread's inboxes (timers started, timers cancelled): any
// thread pushes, one thread takes everything at once, and only a push
// that finds the inbox empty wakes the taker.
namespace {

struct item {
  std::uint64_t producer = 0;
  std::uint64_t seq = 0;
  item* next = nullptr;
};
using inbox = tact::detail::intrusive_inbox<item, &item::next>;

}  // namespace

TEST_CASE("an inbox gives its items oldest first, and says which push found it empty") {
  inbox box;
  item a, b, c;
  CHECK(box.take_all() == nullptr);
  CHECK(box.push(&a));
  CHECK_FALSE(box.push(&b));
  CHECK_FALSE(box.push(&c));
  item* taken = box.take_all();
  REQUIRE(taken == &a);
  REQUIRE(a.next == &b);
  REQUIRE(b.next == &c);
  CHECK(c.next == nullptr);
  CHECK(box.take_all() == nullptr);
  b.next = nullptr;     // taken: unlinked before it goes in again
  CHECK(box.push(&b));  // empty again: this push rings
  CHECK(box.take_all() == &b);
  CHECK(b.next == nullptr);
}

// The taker works as the timer thread does: it reads the bell, takes all,
// and when it took nothing waits for the bell to change; producers ring
// only when their push found the inbox empty. A ring the protocol lost
// shows as a taker waiting on an unchanged bell after every producer has
// finished with items still to come: recorded, not waited out.
TEST_CASE("items pushed from many threads are taken once each, in each thread's order") {
  const int producers = GENERATE(1, 2, 8);  // 8 on 2 cores: pushes preempted mid-CAS
  const std::uint64_t per_producer = tact::test::scaled(100'000);
  std::vector<std::vector<item>> items(producers, std::vector<item>(per_producer));
  inbox box;
  std::atomic<std::uint32_t> bell{0};
  std::atomic<int> done{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::uint64_t s = 0; s < per_producer; ++s) {
        item& i = items[p][s];
        i.producer = static_cast<std::uint64_t>(p);
        i.seq = s;
        if (box.push(&i)) bell.fetch_add(1);
      }
      done.fetch_add(1);
    });

  std::vector<std::uint64_t> next(producers, 0);
  std::uint64_t received = 0;
  std::uint64_t order_violations = 0;
  bool lost_ring = false;
  while (received < producers * per_producer && !lost_ring) {
    const std::uint32_t seen = bell.load();
    item* taken = box.take_all();
    if (taken == nullptr) {
      for (;;) {
        const bool all_done = done.load() == producers;
        if (bell.load() != seen) break;
        if (all_done) {
          lost_ring = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    for (; taken != nullptr; taken = taken->next) {
      if (taken->seq != next[taken->producer]) ++order_violations;
      next[taken->producer] = taken->seq + 1;
      ++received;
    }
  }
  for (std::thread& t : threads) t.join();

  CHECK_FALSE(lost_ring);
  CHECK(order_violations == 0);
  CHECK(received == producers * per_producer);
  for (std::uint64_t n : next) CHECK(n == per_producer);
  CHECK(box.take_all() == nullptr);
}
