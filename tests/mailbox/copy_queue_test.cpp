#include <catch2/catch.hpp>

#include <cstdint>

#include "mailbox/copy_queue.hpp"

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

TEST_CASE("a copy queue grows by doubling from its floor") {
  copy_queue q{10};
  for (std::uintptr_t i = 0; i < 10; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 10);
  q.push(numbered(10));
  CHECK(q.capacity() == 20);
  for (std::uintptr_t i = 11; i < 21; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 40);
  for (std::uintptr_t i = 0; i < 21; ++i) REQUIRE(number_of(q.pop()) == i);
}

// The thesis's example: with "reclaim one slot per gulp" alone, a queue that
// never holds more than 19 messages shrinks from 20 to 18 and then doubles
// to 36. Reclaiming only while less than half is used prevents it.
TEST_CASE("a copy queue that peaks at 19 of 20 slots never doubles to 36") {
  copy_queue q{10};
  REQUIRE(round_trip(q, 19));
  REQUIRE(q.capacity() == 20);
  for (int gulp = 0; gulp < 100; ++gulp) {
    REQUIRE(round_trip(q, 19));
    REQUIRE(q.capacity() == 20);
  }
}

TEST_CASE("an underused copy queue shrinks toward its floor and never below it") {
  copy_queue q{16};
  REQUIRE(round_trip(q, 5000));
  std::uint32_t previous = q.capacity();
  REQUIRE(previous == 8192);
  for (int gulp = 0; gulp < 200; ++gulp) {
    REQUIRE(round_trip(q, 3));
    REQUIRE(q.capacity() <= previous);
    REQUIRE(q.capacity() >= 16);
    previous = q.capacity();
  }
  CHECK(q.capacity() == 16);
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
  // Settles where 100 messages use at least half of the array.
  CHECK(q.capacity() > 100);
  CHECK(q.capacity() <= 200);
}

TEST_CASE("a batch that grows while it is drained first reuses its consumed front") {
  copy_queue q{8};
  for (std::uintptr_t i = 0; i < 8; ++i) q.push(numbered(i));
  for (std::uintptr_t i = 0; i < 6; ++i) REQUIRE(number_of(q.pop()) == i);
  for (std::uintptr_t i = 8; i < 14; ++i) q.push(numbered(i));
  CHECK(q.capacity() == 8);
  for (std::uintptr_t i = 6; i < 14; ++i) REQUIRE(number_of(q.pop()) == i);
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
