#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// A worker holds its batch's sends to other queues back until the batch
// ends (docs/design.md, "Outboxes"), but only while no worker is idle: a
// send that an idle worker could run must reach it at once, however long
// the sender's behaviour goes on.
namespace {

using namespace std::chrono_literals;

constexpr auto patient = 60s;  // a failure if reached, never a wait that passes

struct nudge : tact::message {};
struct start : tact::message {};

struct receiver : tact::actor {
  std::atomic<bool> nudged{false};
  tact::allocation receive(nudge&) {
    nudged.store(true, std::memory_order_release);
    return Nodelete;
  }
};

// Sends, then goes on until the send has been received: it could not
// finish if the send waited for the end of its batch.
struct sender : tact::actor {
  receiver* to = nullptr;
  nudge n;
  std::atomic<bool> seen{false};
  tact::allocation receive(start&) {
    *to | n;
    const auto give_up = std::chrono::steady_clock::now() + patient;
    while (!to->nudged.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    seen.store(to->nudged.load(std::memory_order_acquire), std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a send reaches an idle worker while its sender's behaviour still runs") {
  // No stealing: the receiver's queue stays with the second worker, which
  // has nothing else to do, and the first worker does not claim it.
  tact::actor_system system{tact::test::configured(
      {.workers = 2, .queues = 2, .steal = tact::steal_policy::none})};
  receiver& r = system.spawn_at<receiver>(tact::on_worker(1));
  sender& s = system.spawn_at<sender>(tact::on_worker(0));
  s.to = &r;
  // The second worker has found nothing to do.
  REQUIRE(tact::test::eventually([&] { return system.stats().load[1].parked; }));
  start go;
  s | go;
  system.await_quiescence();
  CHECK(s.seen.load());
  CHECK(tact::test::conservation_of(system));
  r | tact::delete_msg;
  s | tact::delete_msg;
  system.stop();
}
