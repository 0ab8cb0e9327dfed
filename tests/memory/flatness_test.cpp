// Memory that a steady workload must not keep taking, and that a burst
// must give back: a long ping-pong (classic, and transactional, whose
// messages are allocated per send) keeps the resident set flat after its
// warm-up; a burst that grew a copy queue a thousandfold is reclaimed by the
// light traffic after it. Bounded by counts, never by time. Not run under
// the sanitizers, whose allocators keep freed memory on purpose.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <thread>

#include <malloc.h>
#include <unistd.h>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/ping_pong.hpp"
#include "support/queue_capacity.hpp"

namespace {

namespace tx = tact::tx;
constexpr std::int64_t mib = 1 << 20;

// The resident set, in bytes, once the allocator has returned what it can.
std::int64_t resident() {
  malloc_trim(0);
  std::ifstream statm{"/proc/self/statm"};
  std::int64_t size = 0;
  std::int64_t pages = 0;
  statm >> size >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

using tact::test::ball;
using tact::test::player;

using tact::test::queue_capacity;

}  // namespace

TEST_CASE("a long classic ping-pong keeps the resident set flat after its warm-up") {
  constexpr std::uint64_t warm_up = 100'000;
  tact::actor_system system{{.workers = 2}};
  player a;
  player b;
  a.other = &b;
  b.other = &a;
  ball rally;
  rally.hits_left = warm_up;
  a | rally;
  system.await_quiescence();
  const std::int64_t before = resident();
  rally.hits_left = 10 * warm_up;
  a | rally;
  system.await_quiescence();
  const std::int64_t after = resident();
  std::cout << "classic ping-pong, " << 10 * warm_up << " messages after " << warm_up
            << " to warm up: resident set grew " << after - before << " bytes\n";
  CHECK(after - before < mib);
  CHECK(system.stats().total.messages_processed == 11 * warm_up + 2);
  a | tact::finished_msg;
  b | tact::finished_msg;
  system.stop();
}

namespace {

tx::behaviour rallying(std::atomic<std::uint64_t>& done) {
  return {[&done](const tx::actor_ref& other, std::uint64_t hits_left) {
            if (hits_left == 0)
              done.fetch_add(1);
            else
              tx::send(other, tx::self(), hits_left - 1);
          }};
}

}  // namespace

TEST_CASE("a long transactional ping-pong, a message allocated per send, keeps the resident set flat") {
  constexpr std::uint64_t warm_up = 100'000;
  std::atomic<std::uint64_t> done{0};
  tact::actor_system system{{.workers = 2}};
  const tx::actor_ref a = tx::spawn(system, rallying(done));
  const tx::actor_ref b = tx::spawn(system, rallying(done));
  tx::send(a, b, warm_up);
  system.await_quiescence();
  const std::int64_t before = resident();
  tx::send(a, b, 10 * warm_up);
  system.await_quiescence();
  const std::int64_t after = resident();
  std::cout << "transactional ping-pong, " << 10 * warm_up << " messages after " << warm_up
            << " to warm up: resident set grew " << after - before << " bytes\n";
  CHECK(done.load() == 2);
  CHECK(after - before < mib);
}

namespace {

struct tick : tact::message {};
struct hold : tact::message {};

struct counter : tact::actor {
  std::uint64_t ticks = 0;
  tact::allocation receive(tick&) {
    ++ticks;
    return Nodelete;
  }
};

// Holds the only worker until released, so that a burst piles up in the
// mailbox of its queue.
struct gate : tact::actor {
  std::atomic<bool> holding{false};
  std::atomic<bool> open{false};
  tact::allocation receive(hold&) {
    holding.store(true, std::memory_order_release);
    while (!open.load(std::memory_order_acquire)) std::this_thread::yield();
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a copy queue grown by a burst shrinks back toward its floor under light traffic") {
  constexpr std::uint64_t burst = 200'000;
  tact::actor_system system{{.workers = 1}};  // one worker, one queue
  gate g;
  counter c;
  tick t;  // one message, sent again and again (Nodelete)
  c | t;
  system.await_quiescence();
  const std::uint64_t baseline = queue_capacity(system);
  const std::int64_t resident_baseline = resident();

  hold h;
  g | h;
  // The worker holds the queue's batch before the burst: else, woken late
  // (a loaded machine), it could gulp part of the burst with `h`, and that
  // part would not count in the mailbox's capacity.
  while (!g.holding.load(std::memory_order_acquire)) std::this_thread::yield();
  for (std::uint64_t i = 0; i < burst; ++i) c | t;
  const std::uint64_t peak = queue_capacity(system);
  const std::int64_t resident_peak = resident();
  g.open.store(true, std::memory_order_release);
  system.await_quiescence();
  REQUIRE(c.ticks == burst + 1);

  // Light traffic: one message per gulp. Each array is halved after 16
  // gulps in a row that used less than half of it; the two arrays take
  // turns, so about 2 x 16 x log2(largest chunk / floor) gulps bring both
  // back (about 200 here).
  constexpr int rounds = 400;
  for (int i = 0; i < rounds; ++i) {
    c | t;
    system.await_quiescence();
  }
  const std::uint64_t settled = queue_capacity(system);
  const std::int64_t resident_settled = resident();
  std::cout << "copy queue burst of " << burst << ": capacity " << baseline << " -> " << peak
            << " -> " << settled << " envelopes after " << rounds
            << " light gulps; resident set " << resident_baseline << " -> " << resident_peak
            << " -> " << resident_settled << " bytes\n";
  CHECK(peak >= burst);
  CHECK(settled <= 2 * std::uint64_t{system.config().copy_queue_floor});  // both arrays at the floor
  CHECK(resident_settled - resident_baseline < mib);
  g | tact::finished_msg;
  c | tact::finished_msg;
  system.stop();
}
