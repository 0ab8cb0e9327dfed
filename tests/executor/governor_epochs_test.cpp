// What the executor counts as an epoch's work for its governor
// (executor::adapt_when_due; docs/design.md, "Fewer workers for
// message-bound work"). Epochs are ended by hand here, with made-up
// times: adapt_every is an hour, so the workers never end one themselves.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "executor/executor.hpp"
#include "executor/governor.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;

struct hold : tact::message {};
struct flood : tact::message {};
struct burst : tact::message {};

// Keeps its worker until released.
struct blocker : tact::actor {
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
  tact::allocation receive(hold&) {
    holding.store(true, std::memory_order_release);
    while (!released.load(std::memory_order_acquire)) std::this_thread::yield();
    return Nodelete;
  }
};

struct sink : tact::actor {
  std::uint64_t received = 0;
  tact::allocation receive(flood&) {
    ++received;
    return Nodelete;
  }
};

// Sends `per_burst` floods to the sink on each burst, then keeps its
// worker until the test has ended the epoch: a worker that ran dry
// meanwhile would undo the governor's count (executor::ran_dry).
struct flooder : tact::actor {
  static constexpr std::uint64_t per_burst = 1'000;
  sink* to = nullptr;
  flood f;
  std::atomic<std::uint64_t> bursts{0};
  std::atomic<std::uint64_t> released{0};
  flooder() { f.allow_unsent(); }
  tact::allocation receive(burst&) {
    for (std::uint64_t i = 0; i < per_burst; ++i) *to | f;
    const std::uint64_t n = bursts.fetch_add(1, std::memory_order_release) + 1;
    while (released.load(std::memory_order_acquire) < n) std::this_thread::yield();
    return Nodelete;
  }
};

// A system of two workers and two queues, epochs ended by hand: the
// sink's worker held by the blocker (as one worker running the flooder's
// long behaviour would hold it), and the flooder on the other worker.
struct flood_rig {
  tact::actor_system system{
      tact::test::configured({.workers = 2, .queues = 2, .adapt_every = 1h})};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  blocker& b = system.spawn_at<blocker>(tact::on_queue(1));
  sink& s = system.spawn_at<sink>(tact::on_queue(1));
  flooder& f = system.spawn_at<flooder>(tact::on_queue(0));
  hold h;
  std::vector<burst> bursts = std::vector<burst>(tact::detail::governor::hold_first);

  flood_rig() {
    f.to = &s;
    b | h;
    while (!b.holding.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  ~flood_rig() {
    b | tact::delete_msg;
    s | tact::delete_msg;
    f | tact::delete_msg;
    system.stop();
  }

  // A burst per epoch for the governor's first hold, each epoch ended
  // while the flooder still holds its worker; `before_each` runs before
  // each burst. The last burst's flooder is still held on return.
  template <class Check>
  void flood_first_hold(Check before_each) {
    // Beyond the first due time, which is an hour after the system started.
    const auto start = std::chrono::steady_clock::now() + 1h;
    for (std::uint32_t e = 0; e < tact::detail::governor::hold_first; ++e) {
      before_each();
      f | bursts[e];
      while (f.bursts.load(std::memory_order_acquire) != e + 1) std::this_thread::yield();
      ex.adapt_when_due(start + (e + 1) * 1h);
      if (e + 1 < tact::detail::governor::hold_first)
        f.released.store(e + 1, std::memory_order_release);
    }
  }
  // Lets the flooder and the blocker go, and waits for quiescence.
  void release() {
    f.released.store(tact::detail::governor::hold_first, std::memory_order_release);
    b.released.store(true, std::memory_order_release);
    system.await_quiescence();
  }
};

}  // namespace

TEST_CASE("an epoch counts the messages sent, not only those run") {
  // A flood whose receiver runs nothing yet: each epoch runs one message
  // and sends a thousand. Counted by runs alone, every epoch looked idle
  // (under governor::least_messages) and no count was ever tried; counted
  // with its sends, the work is message-bound and the governor tries one
  // worker after its first hold.
  flood_rig rig;
  rig.flood_first_hold([&] { CHECK(rig.ex.active_workers() == 2); });
  CHECK(rig.ex.active_workers() == 1);
  rig.release();
  CHECK(rig.s.received == tact::detail::governor::hold_first * flooder::per_burst);
  CHECK(tact::test::conservation_of(rig.system));
}

TEST_CASE("once the running workers run dry, the workers the governor stood down run again") {
  // As above, the governor stands the second worker down while the
  // flood is sent; then the work stops. The next work, sent from outside
  // once the system is quiescent, must find every worker running: on one
  // worker alone it would start a solo turn, whose batch takes in and
  // keeps every idle queue, and a behaviour of it that waits for another
  // actor would hold that actor's mail where the other worker, once
  // back, could not take it.
  flood_rig rig;
  rig.flood_first_hold([] {});
  REQUIRE(rig.ex.active_workers() == 1);
  rig.release();
  // No epoch has ended since (the next is due in an hour).
  CHECK(rig.ex.active_workers() == 2);
  // A count set by hand is not the governor's: it stays.
  rig.ex.set_active(1);
  burst more;
  rig.f.released.store(tact::detail::governor::hold_first + 1, std::memory_order_release);
  rig.f | more;
  rig.system.await_quiescence();
  CHECK(rig.ex.active_workers() == 1);
  CHECK(rig.s.received == (tact::detail::governor::hold_first + 1) * flooder::per_burst);
  CHECK(tact::test::conservation_of(rig.system));
}
