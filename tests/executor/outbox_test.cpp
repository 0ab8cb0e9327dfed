#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "executor/outbox.hpp"

using tact::detail::copy_queue;
using tact::detail::envelope;
using tact::detail::outbox;

namespace {

void* number(std::uintptr_t n) { return reinterpret_cast<void*>(n); }
std::uintptr_t number_of(const envelope& e) { return reinterpret_cast<std::uintptr_t>(e.target); }

// What a drain posts: per call, the queue and the envelopes' numbers.
using posted = std::vector<std::pair<std::uint32_t, std::vector<std::uintptr_t>>>;

posted drain(outbox& box) {
  posted out;
  box.drain([&](std::uint32_t queue, const envelope* e, std::uint32_t n, copy_queue::backup&) {
    std::vector<std::uintptr_t> numbers;
    for (std::uint32_t i = 0; i < n; ++i) numbers.push_back(number_of(e[i]));
    out.emplace_back(queue, std::move(numbers));
  });
  return out;
}

void hold(outbox& box, std::uint32_t queue, std::uintptr_t n) {
  REQUIRE_FALSE(box.full());  // a full box is never ready, however many backup chunks it gets
  while (!box.ready()) box.add_backup();
  box.add(queue, number(n), nullptr, nullptr);
}

// Holds sends numbered 0 .. n - 1 to `queue`; returns their numbers.
std::vector<std::uintptr_t> hold_flood(outbox& box, std::uint32_t queue, std::uint32_t n) {
  std::vector<std::uintptr_t> flood;
  for (std::uint32_t i = 0; i < n; ++i) {
    hold(box, queue, i);
    flood.push_back(i);
  }
  return flood;
}

}  // namespace

TEST_CASE("an outbox posts each queue's sends together, in send order, queues by first send") {
  outbox box{8};
  CHECK(box.empty());
  hold(box, 5, 1);
  hold(box, 2, 2);
  hold(box, 5, 3);
  hold(box, 7, 4);
  hold(box, 2, 5);
  hold(box, 5, 6);
  CHECK_FALSE(box.empty());
  const posted first = drain(box);
  CHECK(first == posted{{5, {1, 3, 6}}, {2, {2, 5}}, {7, {4}}});
  CHECK(box.empty());
  // Drained, it starts afresh: no queue remembers an old chain.
  hold(box, 2, 7);
  hold(box, 5, 8);
  CHECK(drain(box) == posted{{2, {7}}, {5, {8}}});
}

TEST_CASE("an outbox is ready for a send only with room and a backup chunk for each it holds") {
  outbox box{2};
  CHECK_FALSE(box.ready());  // no backup chunk yet
  box.add_backup();
  CHECK(box.ready());
  box.add(0, number(0), nullptr, nullptr);
  CHECK_FALSE(box.ready());  // one backup chunk, one send held
  for (std::uint32_t i = 1; i < outbox::shared_most; ++i) hold(box, i % 2, i);
  CHECK(box.full());
  CHECK_FALSE(box.ready());
  const posted all = drain(box);
  REQUIRE(all.size() == 2);
  CHECK(all[0].second.size() + all[1].second.size() == outbox::shared_most);
  // The backup chunks stay for the next sends: nothing to allocate.
  CHECK(box.ready());
}

TEST_CASE("an outbox tells which queues it holds sends for, and posts one queue's as they lie") {
  outbox box{8};
  CHECK_FALSE(box.holds(3));
  hold(box, 3, 1);
  CHECK(box.holds(3));
  CHECK_FALSE(box.holds(4));
  hold(box, 3, 2);
  hold(box, 3, 3);
  CHECK(drain(box) == posted{{3, {1, 2, 3}}});
  CHECK_FALSE(box.holds(3));
  // One queue, then another, then the first again: each queue's sends in
  // order, the queues by first send.
  hold(box, 6, 4);
  hold(box, 6, 5);
  hold(box, 1, 6);
  CHECK(box.holds(6));
  CHECK(box.holds(1));
  hold(box, 6, 7);
  hold(box, 1, 8);
  CHECK(drain(box) == posted{{6, {4, 5, 7}}, {1, {6, 8}}});
  CHECK_FALSE(box.holds(6));
  CHECK_FALSE(box.holds(1));
}

TEST_CASE("an outbox posts a full run of sends to one queue in order") {
  outbox box{2};
  const std::vector<std::uintptr_t> flood = hold_flood(box, 1, outbox::one_queue_most);
  CHECK(box.full());
  CHECK(drain(box) == posted{{1, flood}});
}

TEST_CASE("an outbox holds fewer sends for one queue than for several") {
  // A flood into one queue goes in groups of one_queue_most; sends spread
  // over queues fill shared_most, in larger groups per queue.
  STATIC_REQUIRE(outbox::one_queue_most < outbox::shared_most);
  outbox box{4};
  const std::vector<std::uintptr_t> flood = hold_flood(box, 2, outbox::one_queue_most);
  CHECK(box.full());
  CHECK(drain(box) == posted{{2, flood}});
  // Drained, a flood is bounded again, even after the box held several queues.
  for (std::uint32_t i = 0; i < outbox::shared_most; ++i) hold(box, i % 3, i);
  CHECK(box.full());
  const posted spread = drain(box);
  REQUIRE(spread.size() == 3);
  CHECK(spread[0].second.size() + spread[1].second.size() + spread[2].second.size() ==
        outbox::shared_most);
  hold_flood(box, 3, outbox::one_queue_most);
  CHECK(box.full());
  CHECK_FALSE(box.ready());
}

TEST_CASE("an outbox holds its whole capacity while its runner runs alone, to one queue or many") {
  // No other worker waits for the sends: a flood goes in groups of the
  // capacity too, and so do sends spread over queues, each queue's in
  // order. Back among other workers, the shared bounds hold again.
  STATIC_REQUIRE(outbox::shared_most < outbox::capacity);
  outbox box{4};
  box.run_alone(true);
  CHECK(box.runs_alone());
  const std::vector<std::uintptr_t> flood = hold_flood(box, 2, outbox::capacity);
  CHECK(box.full());
  CHECK(drain(box) == posted{{2, flood}});
  std::vector<std::uintptr_t> to[3];
  for (std::uint32_t i = 0; i < outbox::capacity; ++i) {
    hold(box, i % 3, i);
    to[i % 3].push_back(i);
  }
  CHECK(box.full());
  CHECK(drain(box) == posted{{0, to[0]}, {1, to[1]}, {2, to[2]}});
  box.run_alone(false);
  CHECK_FALSE(box.runs_alone());
  hold_flood(box, 3, outbox::one_queue_most);
  CHECK(box.full());
  drain(box);
  for (std::uint32_t i = 0; i < outbox::shared_most; ++i) hold(box, i % 2, i);
  CHECK(box.full());
}
