#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/testing.hpp>
#include <tact/timer.hpp>
#include <tact/transactional.hpp>
#include <tact/tx/timer.hpp>

#include "support/test_support.hpp"

// Timers: delivery after the delay, order, cancellation that wins even
// against a message already queued, periodic ticks that never pile up,
// targets that finish first, stop() with timers pending, transactional
// timers that start only on commit, and many threads racing cancel against
// delivery. No test waits for a time: each waits for an event, and a later
// "sentinel" timer proves a negative (a cancelled timer due earlier would
// have come first, since one target receives timers in due order).
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using clock_type = std::chrono::steady_clock;

struct tick : tact::message {
  explicit tick(int i = 0) : id{i} {}
  int id;
};
struct sentinel : tact::message {};

// Counts what it receives and lets the test wait for a sentinel.
struct recorder : tact::actor {
  explicit recorder(tact::actor_system& system) : tact::actor{system} {}
  std::vector<int> ticks;  // only touched by receive, read after the sentinel
  std::vector<clock_type::time_point> at;
  std::promise<void> sentinel_seen;
  tact::allocation receive(tick& m) {
    ticks.push_back(m.id);
    at.push_back(clock_type::now());
    return Nodelete;
  }
  tact::allocation receive(sentinel&) {
    sentinel_seen.set_value();
    return Nodelete;
  }
  void await_sentinel() { sentinel_seen.get_future().wait(); }
};

template <class... A>
void finish(tact::actor_system& system, A&... actors) {
  ((actors | tact::finished_msg), ...);
  system.await_quiescence();
}

}  // namespace

TEST_CASE("send_after delivers once, not before its delay") {
  tact::actor_system system{{.workers = 2}};
  recorder r{system};
  tick t{1};
  sentinel s;
  const auto started = clock_type::now();
  auto timer = tact::send_after(20ms, r, t);
  CHECK(timer.active());
  tact::send_after(40ms, r, s);
  r.await_sentinel();
  REQUIRE(r.ticks == std::vector<int>{1});
  CHECK(r.at[0] - started >= 20ms);
  CHECK_FALSE(timer.active());
  CHECK_FALSE(timer.cancel());  // delivered: nothing left to stop
  finish(system, r);
}

TEST_CASE("timers started with the same delay arrive in the order they were started") {
  tact::actor_system system{{.workers = 2}};
  recorder r{system};
  std::vector<tick> ticks;
  ticks.reserve(200);  // no copies: a copy destroyed unsent is reported
  for (int i = 0; i < 200; ++i) ticks.emplace_back(i);
  for (auto& t : ticks) tact::send_after(3ms, r, t);
  sentinel s;
  tact::send_after(3ms, r, s);
  r.await_sentinel();
  REQUIRE(r.ticks.size() == ticks.size());
  for (int i = 0; i < 200; ++i) CHECK(r.ticks[static_cast<std::size_t>(i)] == i);
  finish(system, r);
}

TEST_CASE("a cancelled timer is never delivered; cancel reports whether it won") {
  tact::actor_system system{{.workers = 2}};
  recorder r{system};
  tick t{1};
  auto timer = tact::send_after(10ms, r, t);
  CHECK(timer.cancel());
  CHECK_FALSE(timer.cancel());  // once
  CHECK_FALSE(timer.active());
  CHECK_FALSE(tact::timer{}.cancel());
  sentinel s;
  tact::send_after(30ms, r, s);
  r.await_sentinel();
  CHECK(r.ticks.empty());
  finish(system, r);
}

// The timer thread's heap, at scale and on a virtual clock: thousands of
// timers, many due at the same instant, a third cancelled before or while
// the clock moves. Each survivor arrives once, in due order and, at one
// instant, in start order; no cancelled one arrives; the pending count
// follows.
TEST_CASE("thousands of timers fire in due order, ties in start order, cancelled ones never") {
  tact::testing::deterministic_system system;
  recorder r{system};
  constexpr int count = 3000;
  std::mt19937_64 random{system.seed()};
  std::vector<tick> ticks;
  ticks.reserve(count);  // no copies: a copy destroyed unsent is reported
  std::vector<int> due(count);
  std::vector<tact::timer> timers;
  for (int i = 0; i < count; ++i) {
    ticks.emplace_back(i);
    due[static_cast<std::size_t>(i)] = static_cast<int>(random() % 200);
    timers.push_back(tact::send_after(std::chrono::milliseconds{due[static_cast<std::size_t>(i)]},
                                      r, ticks.back()));
  }
  std::vector<bool> cancelled(count, false);
  std::size_t pending = count;
  // Cancels up to count / 12 timers not due yet.
  const auto cancel_some = [&](int now) {
    for (int k = 0; k < count / 12; ++k) {
      const auto i = static_cast<std::size_t>(random() % count);
      if (cancelled[i] || due[i] <= now) continue;  // fired already: cancel would lose
      INFO("timer " << i << " due at " << due[i] << " ms, now " << now << " ms");
      REQUIRE(timers[i].cancel());
      cancelled[i] = true;
      --pending;
    }
  };
  cancel_some(-1);
  REQUIRE(system.pending_timers() == pending);
  for (int now = 0; now < 210;) {
    const int step = 1 + static_cast<int>(random() % 7);
    system.advance_time(std::chrono::milliseconds{step});
    now += step;
    system.run();
    pending = 0;
    for (std::size_t i = 0; i < count; ++i) pending += due[i] > now && !cancelled[i] ? 1 : 0;
    CHECK(system.pending_timers() == pending);
    cancel_some(now);
  }
  std::vector<int> expected;
  for (int i = 0; i < count; ++i)
    if (!cancelled[static_cast<std::size_t>(i)]) expected.push_back(i);
  std::stable_sort(expected.begin(), expected.end(), [&](int a, int b) {
    return due[static_cast<std::size_t>(a)] < due[static_cast<std::size_t>(b)];
  });
  CHECK(r.ticks == expected);
  CHECK(system.pending_timers() == 0);
  r | tact::finished_msg;
  system.run();
}

namespace {

// Holds its worker in receive(tick) until the test lets it go.
struct holder : tact::actor {
  explicit holder(tact::actor_system& system) : tact::actor{system} {}
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};
  std::atomic<int> held_ticks{0};
  std::atomic<int> late_ticks{0};
  std::promise<void> done;
  tact::allocation receive(tick& m) {
    if (m.id == 0) {
      ++held_ticks;
      holding.store(true);
      while (!release.load()) std::this_thread::sleep_for(100us);
    } else {
      ++late_ticks;
    }
    return Nodelete;
  }
  tact::allocation receive(sentinel&) {
    done.set_value();
    return Nodelete;
  }
};

struct probe : tact::actor {
  explicit probe(tact::actor_system& system) : tact::actor{system} {}
  std::promise<void> fired;
  tact::allocation receive(tick&) {
    fired.set_value();
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("cancel wins against a timer message already queued") {
  tact::actor_system system{{.workers = 2}};
  holder h{system};
  probe p{system};
  tick hold{0};
  h | hold;
  while (!h.holding.load()) std::this_thread::yield();
  // The timer thread posts timers in due order: once the probe has fired,
  // the late tick waits in the holder's queue behind the held message.
  tick late{1};
  auto timer = tact::send_after(0ms, h, late);
  tick poke{2};
  tact::send_after(1ms, p, poke);
  p.fired.get_future().wait();
  CHECK(timer.active());
  CHECK(timer.cancel());
  h.release.store(true);
  sentinel s;
  h | s;
  h.done.get_future().wait();
  CHECK(h.late_ticks.load() == 0);
  finish(system, h, p);
}

namespace {

// Cancels its own periodic timer from the tick `stop_at`, then asks for a
// sentinel three periods later: a tick still alive would come first.
struct go : tact::message {};

struct metronome : tact::actor {
  metronome(tact::actor_system& system, int stop_at, bool hold_first)
      : tact::actor{system}, stop_at_{stop_at}, hold_first_{hold_first} {}
  tact::timer timer;  // started and cancelled by the actor itself
  std::atomic<bool> release{false};
  std::atomic<bool> holding{false};
  int ticks = 0;
  bool cancel_won = false;
  std::promise<int> result;

  tact::allocation receive(go&) {
    timer = tact::send_every(period, *this, beat_);
    return Nodelete;
  }
  tact::allocation receive(tick&) {
    ++ticks;
    if (ticks == 1 && hold_first_) {
      holding.store(true);
      while (!release.load()) std::this_thread::sleep_for(100us);
    }
    if (ticks == stop_at_) {
      cancel_won = timer.cancel();
      tact::send_after(3 * period, *this, end_);
    }
    return Nodelete;
  }
  tact::allocation receive(sentinel&) {
    result.set_value(ticks);
    return Nodelete;
  }
  static constexpr auto period = 2ms;

 private:
  int stop_at_;
  bool hold_first_;
  tick beat_;
  sentinel end_;
};

}  // namespace

TEST_CASE("send_every ticks until cancelled, and no tick starts after cancel") {
  tact::actor_system system{{.workers = 2}};
  metronome m{system, 5, false};
  go start;
  m | start;
  CHECK(m.result.get_future().get() == 5);
  CHECK(m.cancel_won);
  CHECK_FALSE(m.timer.active());
  finish(system, m);
}

TEST_CASE("a periodic timer skips ticks while one is queued or running") {
  tact::actor_system system{{.workers = 2}};
  metronome m{system, 2, true};
  go start;
  m | start;
  while (!m.holding.load()) std::this_thread::yield();
  std::this_thread::sleep_for(20 * metronome::period);  // ten ticks come due meanwhile
  m.release.store(true);
  // At most one tick waited behind the held one, and the receiver cancels
  // in it: two in all, however many came due.
  CHECK(m.result.get_future().get() == 2);
  finish(system, m);
}

TEST_CASE("send_every refuses a message it could not deliver twice, or no period") {
  tact::actor_system system{{.workers = 1}};
  recorder r{system};
  tick beat;
  CHECK_THROWS_AS(tact::send_every(0ms, r, beat), std::invalid_argument);
  auto* owned = new tick{};
  owned->set_allocation(tact::allocation::Delete);
  CHECK_THROWS_AS(tact::send_every(1ms, r, *owned), std::invalid_argument);
  // Both stay the program's: send them the usual way.
  r | beat | *owned;
  finish(system, r);
}

namespace {

struct counted : tact::message {
  explicit counted(std::atomic<int>& d) : destroyed{&d} { set_allocation(tact::allocation::Delete); }
  ~counted() override { destroyed->fetch_add(1); }
  std::atomic<int>* destroyed;
};

struct mortal : tact::actor {
  explicit mortal(std::atomic<int>& received) : received_{&received} {}
  tact::allocation receive(counted&) {
    received_->fetch_add(1);
    return Nodelete;
  }
  tact::allocation receive(sentinel&) { return Delete; }
  std::atomic<int>* received_;
};

}  // namespace

TEST_CASE("a timer whose target finished first is dropped quietly, its message freed") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  std::atomic<int> received{0};
  std::atomic<int> destroyed{0};
  auto& m = system.spawn<mortal>(received);
  auto timer = tact::send_after(5ms, m, *new counted{destroyed});
  sentinel bye;
  m | bye;  // deleted long before the timer is due
  while (destroyed.load() == 0) std::this_thread::sleep_for(1ms);
  CHECK(received.load() == 0);
  CHECK_FALSE(timer.active());
  CHECK_FALSE(timer.cancel());
  system.stop();
  CHECK(destroyed.load() == 1);
  CHECK(log.count(tact::diagnostic_kind::send_to_finished) == 0);
  CHECK(log.count(tact::diagnostic_kind::delivery_to_finished) == 0);
  CHECK(log.count(tact::diagnostic_kind::messages_unreceived) == 0);
}

TEST_CASE("stop() ends pending timers without waiting for them and frees their messages") {
  tact::test::diagnostics_log log;
  std::atomic<int> destroyed{0};
  std::atomic<int> received{0};
  tact::timer classic_timer;
  {
    tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
    auto& m = system.spawn<mortal>(received);
    classic_timer = tact::send_after(1h, m, *new counted{destroyed});
    sentinel bye;
    m | bye;
    auto keeper = tx::spawn(system, tx::behaviour{[](const std::shared_ptr<int>&) {}});
    auto payload = std::make_shared<int>(7);
    std::weak_ptr<int> watch = payload;
    auto tx_timer = tx::send_after(1h, keeper, std::move(payload));
    system.stop();
    CHECK(watch.expired());  // the timer's copy went with it
    CHECK_FALSE(tx_timer.cancel());
  }
  CHECK(destroyed.load() == 1);
  CHECK(received.load() == 0);
  CHECK_FALSE(classic_timer.cancel());  // safe after the system is gone
  CHECK(log.count(tact::diagnostic_kind::idle_with_live_actors) == 0);
}

TEST_CASE("a finished actor that waits for its own timer is not reported as stuck") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  std::atomic<int> received{0};
  auto& m = system.spawn<mortal>(received);
  sentinel bye;
  tact::send_after(30ms, m, bye);
  system.stop();  // waits for the timer to finish the actor
  CHECK(log.count(tact::diagnostic_kind::idle_with_live_actors) == 0);
}

namespace {

// Keeps its timers' messages as members and deletes itself with timers
// pending: the timers must not touch the messages afterwards.
struct self_timing : tact::actor {
  explicit self_timing(int mode) : mode_{mode} {}
  tick beat{0};
  tick later{1};
  tact::timer every;
  tact::timer once;
  tact::allocation receive(sentinel&) {
    every = tact::send_every(1ms, *this, beat);
    once = tact::send_after(1h, *this, later);
    return Nodelete;
  }
  tact::allocation receive(tick& t) {
    if (t.id != 0) return Nodelete;
    if (mode_ == 1) every.cancel();  // and the pending one-shot stays
    return Delete;                   // mode 0: both stay pending
  }
  int mode_;
};

}  // namespace

TEST_CASE("an actor that deletes itself with timers pending on its member messages") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  sentinel go[2];
  for (int mode = 0; mode < 2; ++mode) system.spawn<self_timing>(mode) | go[mode];
  system.stop();  // waits for both to delete themselves, then ends the timers
  CHECK(log.count(tact::diagnostic_kind::send_to_finished) == 0);
  CHECK(log.count(tact::diagnostic_kind::delivery_to_finished) == 0);
}

TEST_CASE("a timer started after stop() simply ends") {
  tact::actor_system system{{.workers = 1}};
  auto keeper = tx::spawn(system, tx::behaviour{[](int) {}});
  system.stop();
  auto late = tx::send_after(1ms, keeper, 1);
  CHECK_FALSE(late.active());
  CHECK_FALSE(late.cancel());
}

// ---- transactional timers ----

namespace {

struct ping {
  int n;
};
struct arm_timer {};
struct arm_and_fail {};
struct done {};

tx::behaviour tx_recorder(std::shared_ptr<std::vector<int>> seen,
                          std::shared_ptr<std::promise<void>> finished) {
  return {[seen](ping p) { seen->push_back(p.n); },
          [finished](done) { finished->set_value(); },
          };
}

}  // namespace

// No race with the clock: the rolled-back handler runs first and stages the
// same delay, so a timer that leaked from it would be due no later than
// the committed one's, and the timer thread sends timers due together in
// the order they were started: ping 2 would be the first ping to arrive.
TEST_CASE("a transactional handler's timer starts only if the handler commits") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  auto first = std::make_shared<std::promise<int>>();
  auto pings = std::make_shared<int>(0);
  auto a = tx::spawn(system,
                     tx::behaviour{[first, pings](ping p) {
                                     if (++*pings == 1) first->set_value(p.n);
                                   },
                                   [](arm_timer) { tx::send_after(1ms, tx::self(), ping{1}); },
                                   [](arm_and_fail) {
                                     tx::send_after(1ms, tx::self(), ping{2});
                                     throw std::runtime_error{"rolled back"};
                                   }},
                     tx::mode::serialized);
  tx::send(a, arm_and_fail{});
  tx::send(a, arm_timer{});
  CHECK(first->get_future().get() == 1);
  system.stop();
}

TEST_CASE("transactional timers deliver, repeat with fresh copies, and cancel") {
  tact::actor_system system{{.workers = 2}};
  auto seen = std::make_shared<std::vector<int>>();
  auto finished = std::make_shared<std::promise<void>>();
  auto a = tx::spawn(system, tx_recorder(seen, finished), tx::mode::serialized);
  auto cancelled = tx::send_after(5ms, a, ping{-1});
  CHECK(cancelled.cancel());
  tx::send_after(1ms, a, ping{3});
  tx::send_after(10ms, a, done{});
  finished->get_future().wait();
  CHECK(*seen == std::vector<int>{3});

  std::atomic<int> ticks{0};
  std::atomic<int> intact{0};
  std::promise<void> three;
  auto beat = tx::spawn(system, tx::behaviour{[&](const std::string& s) {
                          if (s == "beat") ++intact;  // each tick gets its own copy
                          if (++ticks == 3) three.set_value();
                        }},
                        tx::mode::serialized);
  auto every = tx::send_every(1ms, beat, std::string{"beat"});
  three.get_future().wait();
  CHECK(every.cancel());
  CHECK_FALSE(every.active());
  system.stop();
  CHECK(ticks.load() >= 3);
  CHECK(intact.load() == ticks.load());
}

// ---- races ----

namespace {

struct racer : tact::actor {
  racer(tact::actor_system& system, std::vector<std::atomic<int>>& received)
      : tact::actor{system}, received_{&received} {}
  tact::allocation receive(tick& m) {
    (*received_)[static_cast<std::size_t>(m.id)].fetch_add(1);
    return Nodelete;
  }
  std::vector<std::atomic<int>>* received_;
};

}  // namespace

TEST_CASE("threads racing cancel against delivery: each timer delivered exactly when cancel lost") {
  const std::size_t per_thread = tact::test::scaled(4000);
  constexpr int threads = 4;
  tact::actor_system system{{.workers = 8}};  // oversubscribed: 8 workers
  const std::size_t total = per_thread * threads;
  std::vector<std::atomic<int>> received(total);
  std::vector<tick> messages;
  messages.reserve(total);
  for (std::size_t i = 0; i < total; ++i) messages.emplace_back(static_cast<int>(i));
  std::vector<std::unique_ptr<racer>> targets;
  for (int i = 0; i < 4; ++i) targets.push_back(std::make_unique<racer>(system, received));
  std::vector<char> cancel_won(total, 0);

  std::vector<std::thread> starters;
  for (int t = 0; t < threads; ++t) {
    starters.emplace_back([&, t] {
      std::mt19937 random{static_cast<unsigned>(t + 1)};
      std::vector<std::pair<std::size_t, tact::timer>> live;
      for (std::size_t k = 0; k < per_thread; ++k) {
        const std::size_t id = static_cast<std::size_t>(t) * per_thread + k;
        auto& target = *targets[random() % targets.size()];
        live.emplace_back(id, tact::send_after(std::chrono::microseconds{random() % 500},
                                               target, messages[id]));
        // Cancel an earlier one, at a random distance: some before they are
        // due, some while queued, some after delivery.
        if (random() % 2 == 0 && !live.empty()) {
          auto& [victim, timer] = live[random() % live.size()];
          if (timer.cancel()) cancel_won[victim] = 1;
        }
      }
    });
  }
  for (auto& s : starters) s.join();
  // Every timer is due within half a millisecond: a sentinel due later
  // comes after all of them were posted, and quiescence after they ran.
  recorder last{system};
  sentinel s;
  tact::send_after(5ms, last, s);
  last.await_sentinel();
  system.await_quiescence();
  std::size_t delivered = 0, cancelled = 0, wrong = 0;
  for (std::size_t i = 0; i < total; ++i) {
    const int n = received[i].load();
    if (cancel_won[i] != 0) {
      ++cancelled;
      if (n != 0) ++wrong;
    } else {
      ++delivered;
      if (n != 1) ++wrong;
    }
  }
  CHECK(wrong == 0);
  CHECK(cancelled > 0);
  CHECK(delivered > 0);
  for (auto& target : targets) *target | tact::finished_msg;
  last | tact::finished_msg;
  system.stop();
}
