// The parker's wake-up as the quiescence count needs it (executor/parker.hpp):
// the count is taken back while the parker still sits in its parked state,
// and given back if the wake loses its swap, so it never exceeds the
// parkers that are parked.
#include "executor/parker.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using tact::detail::parker;

namespace {

bool park_as(parker& p, parker::state parked) {
  return p.park([] { return true; }, [] { return false; }, parked);
}

}  // namespace

// Taken back after the swap instead, as the count once was, a waker
// preempted between the two left its worker running, free to park and
// count itself again: every worker counted parked while the waker, in the
// middle of its batch, was not.
TEST_CASE("a wake takes the count back while its parker is still parked") {
  const parker::state parked = GENERATE(parker::watching, parker::sleeping, parker::resting);
  parker p;
  REQUIRE(park_as(p, parked));
  parker::state during = parker::running;
  int unparked = 0;
  int reparked = 0;
  const parker::state found = p.wake(
      [&] {
        ++unparked;
        during = p.now();
      },
      [&] { ++reparked; });
  CHECK(found == parked);
  CHECK(during == parked);
  CHECK(unparked == 1);
  CHECK(reparked == 0);
  CHECK(p.now() == parker::running);
}

TEST_CASE("a wake that loses its swap gives the count back and tries again") {
  parker p;
  REQUIRE(park_as(p, parker::watching));
  int unparked = 0;
  int reparked = 0;
  // The parker moves between parked states (a watcher going to sleep)
  // between the wake's look and its swap.
  const parker::state found = p.wake(
      [&] {
        if (++unparked == 1) CHECK(p.move(parker::watching, parker::sleeping));
      },
      [&] { ++reparked; });
  CHECK(found == parker::sleeping);
  CHECK(unparked == 2);
  CHECK(reparked == 1);
  CHECK(p.now() == parker::running);
}

TEST_CASE("a wake that finds its parker running or waiting counts nothing") {
  const parker::state state = GENERATE(parker::running, parker::waiting, parker::parking);
  parker p;
  if (state == parker::waiting) REQUIRE(park_as(p, parker::waiting));
  if (state == parker::parking) {
    // Registering: park() is inside its registration step.
    p.park(
        [&] {
          int counted = 0;
          CHECK(p.wake([&] { ++counted; }, [&] { ++counted; }) == parker::parking);
          CHECK(counted == 0);
          return true;
        },
        [] { return false; }, parker::sleeping);
    CHECK(p.now() == parker::running);  // the commit lost to the wake
    return;
  }
  int counted = 0;
  CHECK(p.wake([&] { ++counted; }, [&] { ++counted; }) == state);
  CHECK(counted == 0);
  CHECK(p.now() == parker::running);
}

// One parker parks and counts itself after each commit, as a pool worker
// does; wakers (8 threads in all, on however few cores) take the count
// back and give it back as parker::wake says. The count must never exceed
// one, the parkers there are: with the count taken back after the swap, a
// waker descheduled in between let the parker park and count itself twice.
TEST_CASE("the count of parked parkers never exceeds the parkers, under racing wakes") {
  const std::uint64_t parks = tact::test::scaled(20'000);
  parker p;
  std::atomic<std::int64_t> count{0};
  std::atomic<std::uint64_t> over{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> wakers;
  for (int w = 0; w < 7; ++w)
    wakers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire))
        p.wake([&] { count.fetch_sub(1, std::memory_order_seq_cst); },
               [&] {
                 if (count.fetch_add(1, std::memory_order_seq_cst) + 1 > 1)
                   over.fetch_add(1, std::memory_order_relaxed);
               });
    });
  std::uint64_t committed = 0;
  for (std::uint64_t i = 0; i < parks; ++i) {
    if (!park_as(p, parker::sleeping)) continue;
    ++committed;
    if (count.fetch_add(1, std::memory_order_seq_cst) + 1 > 1)
      over.fetch_add(1, std::memory_order_relaxed);
    p.sleep(parker::sleeping);
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : wakers) t.join();
  CHECK(over.load() == 0);
  CHECK(count.load() == 0);  // every committed park was taken back once
  CHECK(committed > 0);
}
