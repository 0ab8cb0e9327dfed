// What the executor counts as an epoch's work for its governor
// (executor::adapt_when_due; docs/design.md, "Fewer workers for
// message-bound work"). Epochs are ended by hand here, with made-up
// times: adapt_every is an hour, so the workers never end one themselves.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

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

// Sends `per_burst` floods to the sink on each burst.
struct flooder : tact::actor {
  static constexpr std::uint64_t per_burst = 1'000;
  sink* to = nullptr;
  flood f;
  std::atomic<std::uint64_t> bursts{0};
  flooder() { f.allow_unsent(); }
  tact::allocation receive(burst&) {
    for (std::uint64_t i = 0; i < per_burst; ++i) *to | f;
    bursts.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("an epoch counts the messages sent, not only those run") {
  // A flood whose receiver runs nothing yet (its worker is held, as one
  // worker running the flooder's long behaviour would hold it): each
  // epoch runs one message and sends a thousand. Counted by runs alone,
  // every epoch looked idle (under governor::least_messages) and no count
  // was ever tried; counted with its sends, the work is message-bound and
  // the governor tries one worker after its first wait.
  tact::actor_system system{tact::test::configured({.workers = 2, .queues = 2, .adapt_every = 1h})};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  blocker& b = system.spawn_at<blocker>(tact::on_queue(1));
  sink& s = system.spawn_at<sink>(tact::on_queue(1));
  flooder& f = system.spawn_at<flooder>(tact::on_queue(0));
  f.to = &s;
  hold h;
  b | h;
  while (!b.holding.load(std::memory_order_acquire)) std::this_thread::yield();
  // Beyond the first due time, which is an hour after the system started.
  const auto start = std::chrono::steady_clock::now() + 1h;
  std::vector<burst> bursts(tact::detail::governor::first_wait);
  for (std::uint32_t e = 0; e < tact::detail::governor::first_wait; ++e) {
    CHECK(ex.active_workers() == 2);
    f | bursts[e];
    while (f.bursts.load(std::memory_order_acquire) != e + 1) std::this_thread::yield();
    ex.adapt_when_due(start + (e + 1) * 1h);
  }
  CHECK(ex.active_workers() == 1);
  b.released.store(true, std::memory_order_release);
  system.await_quiescence();
  CHECK(s.received == tact::detail::governor::first_wait * flooder::per_burst);
  CHECK(tact::test::conservation_of(system));
  b | tact::delete_msg;
  s | tact::delete_msg;
  f | tact::delete_msg;
  system.stop();
}

TEST_CASE("an epoch's time leaves out the spells in which every worker is parked") {
  // Bursts of work with idle spells between them: an epoch that spanned a
  // spell weighed the work around it over the idle time too, as if the
  // work were slow, and every spell brought every worker back. The epochs'
  // clock stops while every worker is parked (quiescence::idle), and no
  // epoch ends meanwhile. Epochs are ended by hand (adapt_every is an
  // hour): what is checked is which ends are due.
  const auto before = std::chrono::steady_clock::now();  // at or before the first epoch's start
  tact::actor_system system{tact::test::configured({.workers = 2, .queues = 2, .adapt_every = 1h})};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  blocker& b = system.spawn_at<blocker>(tact::on_queue(1));
  system.await_quiescence();
  constexpr auto spell = 50ms;
  const std::int64_t idle_before = ex.quiet().idle();
  std::this_thread::sleep_for(spell);
  hold h;
  b | h;  // ends the spell, and keeps a worker running from here on
  while (!b.holding.load(std::memory_order_acquire)) std::this_thread::yield();
  CHECK(std::chrono::nanoseconds{ex.quiet().idle() - idle_before} >= spell);
  // The first epoch is due an hour after it began, on the epochs' clock:
  // half a spell past that on the steady clock, it is not due yet.
  const std::uint64_t weighed = ex.epochs_weighed();
  ex.adapt_when_due(before + 1h + spell / 2);
  CHECK(ex.epochs_weighed() == weighed);
  ex.adapt_when_due(std::chrono::steady_clock::now() + 1h);
  CHECK(ex.epochs_weighed() == weighed + 1);
  // Every worker parked: no epoch ends, however late.
  b.released.store(true, std::memory_order_release);
  system.await_quiescence();
  ex.adapt_when_due(std::chrono::steady_clock::now() + 24h);
  CHECK(ex.epochs_weighed() == weighed + 1);
  CHECK(tact::test::conservation_of(system));
  b | tact::delete_msg;
  system.stop();
}

namespace {

struct token : tact::message {
  std::uint64_t left = 0;
};

// Passes one token back and forth with its partner, on another queue: a
// chain, one message to run at a time.
struct relay : tact::actor {
  relay* partner = nullptr;
  tact::allocation receive(token& t) {
    if (t.left-- != 0) *partner | t;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a worker running alone tells whether the work ever had two messages waiting") {
  // What the governor is told of an epoch run by one worker alone
  // (governor::sharing): a chain never has two messages waiting, a flood
  // has thousands. The count is set by hand, so the worker runs alone from
  // its first batch; epochs are never due.
  using tact::detail::governor;
  tact::actor_system system{tact::test::configured({.workers = 2, .queues = 4, .adapt_every = 1h})};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  ex.set_active(1);
  while (!ex.others_rest()) std::this_thread::yield();
  relay& a = system.spawn_at<relay>(tact::on_queue(0));
  relay& b = system.spawn_at<relay>(tact::on_queue(3));
  a.partner = &b;
  b.partner = &a;
  system.await_quiescence();
  (void)ex.take_sharing();
  token t;
  t.left = 300'000;  // long enough for turns that end at the gulp budget
  a | t;
  system.await_quiescence();
  CHECK(ex.take_sharing() == governor::sharing::none);
  sink& s = system.spawn_at<sink>(tact::on_queue(1));
  flooder& f = system.spawn_at<flooder>(tact::on_queue(2));
  f.to = &s;
  std::vector<burst> bursts(200);
  for (burst& each : bursts) f | each;
  system.await_quiescence();
  CHECK(ex.take_sharing() == governor::sharing::some);
  CHECK(s.received == bursts.size() * flooder::per_burst);
  CHECK(tact::test::conservation_of(system));
  a | tact::delete_msg;
  b | tact::delete_msg;
  s | tact::delete_msg;
  f | tact::delete_msg;
  system.stop();
}
