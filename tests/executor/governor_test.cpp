// The governor's decisions, epoch by epoch, for workloads whose message
// rate depends on the count of running workers in known ways.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "executor/governor.hpp"

namespace {

using tact::detail::governor;
using namespace std::chrono_literals;

// Runs `epochs` epochs of 1 ms each, in which `rate(active)` messages per
// microsecond are processed and which show `shown(active)` of the work's
// parallelism (see governor::sharing; called after `rate`), and returns
// the count of running workers during each epoch.
using sharing_of = std::function<governor::sharing(std::uint32_t)>;
std::vector<std::uint32_t> run(governor& g, std::uint32_t epochs,
                               const std::function<double(std::uint32_t)>& rate,
                               const sharing_of& shown) {
  std::vector<std::uint32_t> during;
  for (std::uint32_t e = 0; e < epochs; ++e) {
    const std::uint32_t active = g.active();
    during.push_back(active);
    const auto messages = static_cast<std::uint64_t>(rate(active) * 1000.0);
    g.decide(messages, 1ms, shown(active));
  }
  return during;
}
// `at_one`: what every epoch at one worker shows; unknown at more.
std::vector<std::uint32_t> run(governor& g, std::uint32_t epochs,
                               const std::function<double(std::uint32_t)>& rate,
                               governor::sharing at_one = governor::sharing::unknown) {
  return run(g, epochs, rate, [at_one](std::uint32_t active) {
    return active == 1 ? at_one : governor::sharing::unknown;
  });
}

std::uint32_t epochs_at(const std::vector<std::uint32_t>& during, std::uint32_t active) {
  std::uint32_t n = 0;
  for (const std::uint32_t a : during) n += a == active ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("the governor starts with every worker") {
  governor g{4, 1ms};
  CHECK(g.active() == 4);
  governor one{1, 1ms};
  CHECK(one.decide(1'000'000, 1ms) == 1);
}

TEST_CASE("work that is not message-bound keeps every worker, and is never tried on fewer") {
  governor g{2, 1ms};
  // Long behaviours: one message per 100 microseconds.
  const auto during = run(g, 2000, [](std::uint32_t) { return 0.01; });
  CHECK(epochs_at(during, 2) == 2000);
}

TEST_CASE("message-bound work that runs faster on one worker moves there and stays") {
  governor g{2, 1ms};
  // Six times as fast on one worker (big, at two workers on a quiet machine).
  const auto during = run(g, 4000, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  // The second message-bound epoch starts a try, and its first epoch at
  // one decides it.
  static_assert(governor::first_wait == 2);
  CHECK(during[0] == 2);
  CHECK(during[1] == 2);
  CHECK(during[2] == 1);
  CHECK(during[3] == 1);
  // Later tries of two workers fail, each doubling the hold: at most one
  // epoch in a hundred is spent at two workers after the first hundred.
  const std::vector<std::uint32_t> later(during.begin() + 100, during.end());
  CHECK(epochs_at(later, 2) * 100 < later.size());
  // Each try costs one epoch at two workers.
  std::uint32_t longest_run_at_two = 0;
  for (std::uint32_t e = 3, run_at_two = 0; e < during.size(); ++e) {
    run_at_two = during[e] == 2 ? run_at_two + 1 : 0;
    longest_run_at_two = std::max(longest_run_at_two, run_at_two);
  }
  CHECK(longest_run_at_two == 1);
}

TEST_CASE("work that runs faster on more workers keeps them all") {
  governor g{2, 1ms};
  const auto during = run(g, 4000, [](std::uint32_t a) { return a == 2 ? 20.0 : 10.0; });
  CHECK(epochs_at(during, 2) * 100 > during.size() * 99);
}

TEST_CASE("fewer workers must gain much to be kept, more workers little") {
  governor g{2, 1ms};
  // A thousand or so messages an epoch (a computation's results), 20%
  // faster on one worker: short of gain_fewer. Close counts decide
  // nothing early: each try spends `pairs` arms at one worker, and the
  // tries come less and less often.
  static_assert(1.2 * 1000 < governor::steady_messages);
  auto during = run(g, 4000, [](std::uint32_t a) { return a == 1 ? 1.2 : 1.0; });
  CHECK(epochs_at(during, 2) * 1000 > during.size() * 985);
  // On one worker, and two are 10% faster: worth it.
  governor narrowed{2, 1ms};
  run(narrowed, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(narrowed.active() == 1);
  during = run(narrowed, 2000, [](std::uint32_t a) { return a == 2 ? 11.0 : 10.0; });
  CHECK(epochs_at(during, 2) * 10 > during.size() * 9);
}

TEST_CASE("a steady stream of messages 15% faster on one worker moves there") {
  // A flood between two actors: each message's lines cross between the
  // caches at two workers (latency's flood, tx_counting_bounded).
  governor g{2, 1ms};
  static_assert(100.0 * 1000 >= governor::steady_messages);
  auto during = run(g, 2000, [](std::uint32_t a) { return a == 1 ? 115.0 : 100.0; });
  std::vector<std::uint32_t> later(during.begin() + 100, during.end());
  CHECK(epochs_at(later, 1) * 100 > later.size() * 98);
  // 5% is not enough.
  governor close{2, 1ms};
  during = run(close, 2000, [](std::uint32_t a) { return a == 1 ? 105.0 : 100.0; });
  later.assign(during.begin() + 100, during.end());
  CHECK(epochs_at(later, 2) * 100 > later.size() * 98);
}

TEST_CASE("a rate that drifts during a try weighs on both counts alike") {
  governor g{2, 1ms};
  // The same at both counts, but growing 3% per epoch, as a workload that
  // is warming up: a try that compared a later stretch with an earlier one
  // would see a gain of 25% in eight epochs.
  std::uint32_t epoch = 0;
  const auto during = run(g, 300, [&](std::uint32_t) { return 10.0 * (1.0 + 0.03 * epoch++); });
  CHECK(epochs_at(during, 2) * 100 > during.size() * 90);
  CHECK(during.back() == 2);
}

TEST_CASE("when the work stops being message-bound every worker runs again at once") {
  governor g{2, 1ms};
  run(g, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(g.active() == 1);
  // Workers stuck in long behaviours: the rate falls.
  CHECK(g.decide(10, 1ms) == 2);
  // And the second message-bound epoch after that starts a try.
  const auto during = run(g, 4, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  CHECK(during == std::vector<std::uint32_t>{2, 2, 1, 1});
}

TEST_CASE("an epoch that lasted longer counts by its rate, not its messages") {
  governor g{2, 1ms};
  run(g, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(g.active() == 1);
  // More messages than one epoch needs, but over a long idle stretch: not
  // message-bound.
  CHECK(g.decide(1'000, 100ms) == 2);
}

TEST_CASE("with more workers the governor climbs to the best count, one step at a time") {
  governor g{4, 1ms};
  // Best at two workers.
  const auto rate = [](std::uint32_t a) {
    switch (a) {
      case 1:
        return 30.0;
      case 2:
        return 40.0;
      case 3:
        return 20.0;
      default:
        return 10.0;
    }
  };
  const auto during = run(g, 6000, rate);
  for (std::size_t e = 1; e < during.size(); ++e) {
    const auto step = static_cast<int>(during[e]) - static_cast<int>(during[e - 1]);
    CHECK((step >= -1 && step <= 1));
  }
  const std::vector<std::uint32_t> later(during.begin() + 1000, during.end());
  CHECK(epochs_at(later, 2) * 10 > later.size() * 9);
}

TEST_CASE("a backlog run at one count does not credit it: an arm's first epoch is not counted") {
  // A flood into an actor that runs on its own worker at two workers: its
  // sender sends at 20 per microsecond and the receiver runs as many (40
  // in all); on one worker the sender sends at 60 and the receiver runs
  // nothing until the sender's long behaviour ends. The first epoch at
  // two after one runs the backlog of that epoch too (60 more). Counting
  // every epoch, each epoch at two follows one at one, and two looked
  // better (100 against 60); counting an arm's last epoch only, one is
  // faster, and is kept.
  governor g{2, 1ms};
  std::uint32_t previous = 2;
  const auto during = run(g, 400, [&](std::uint32_t a) {
    const double rate = a == 1 ? 60.0 : (previous == 1 ? 100.0 : 40.0);
    previous = a;
    return rate;
  });
  const std::vector<std::uint32_t> later(during.begin() + 100, during.end());
  CHECK(epochs_at(later, 1) * 10 > later.size() * 9);
}

namespace {

// The runs of epochs at `active` workers: where each starts, and how long
// it is.
struct stretch {
  std::uint32_t first;
  std::uint32_t epochs;
};
std::vector<stretch> runs_at(const std::vector<std::uint32_t>& during, std::uint32_t active) {
  std::vector<stretch> runs;
  for (std::uint32_t e = 0; e < during.size(); ++e) {
    if (during[e] != active) continue;
    if (e == 0 || during[e - 1] != active) runs.push_back({e, 0});
    ++runs.back().epochs;
  }
  return runs;
}
std::vector<std::uint32_t> runs_at_two(const std::vector<std::uint32_t>& during) {
  std::vector<std::uint32_t> lengths;
  for (const stretch& r : runs_at(during, 2)) lengths.push_back(r.epochs);
  return lengths;
}

}  // namespace

TEST_CASE("a first pair of arms far apart decides the try") {
  // 1.6 times as fast on one worker, as big's counted epochs are, but the
  // first epoch at two after one runs a backlog, as fast as the epoch
  // before it: the first epoch decides nothing, the first pair does. Each
  // try of two costs one arm, and is followed by a hold at one, not by a
  // second pair.
  governor g{2, 1ms};
  std::uint32_t previous = 2;
  const auto with_backlog = [&](std::uint32_t a) {
    const double rate = a == 1 ? 16.0 : previous == 1 ? 16.0 : 10.0;
    previous = a;
    return rate;
  };
  run(g, 200, with_backlog);
  REQUIRE(g.active() == 1);
  const auto during = run(g, 2000, with_backlog);
  const std::vector<std::uint32_t> tries = runs_at_two(during);
  REQUIRE(tries.size() > 1);
  for (const std::uint32_t epochs : tries) CHECK(epochs == governor::arm_epochs);
  // Close counts go on to the second pair: 10% apart, two arms at two.
  governor close{2, 1ms};
  run(close, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(close.active() == 1);
  const auto later = run(close, 2000, [](std::uint32_t a) { return a == 1 ? 11.0 : 10.0; });
  const std::vector<std::uint32_t> close_tries = runs_at_two(later);
  REQUIRE(!close_tries.empty());
  // Arms alternate: the two arms at two of a try are one arm at one apart.
  CHECK(epochs_at(later, 2) == close_tries.size() / 2 * governor::pairs * governor::arm_epochs);
  for (const std::uint32_t epochs : close_tries) CHECK(epochs == governor::arm_epochs);
  CHECK(close_tries.size() % 2 == 0);
}

TEST_CASE("a try of more workers that trails by 15% after its first pair fails") {
  // 20% faster on one worker (latency's flood): past trailing_gain, short
  // of decisive_gain. Each try of two ends after its first pair: one arm
  // at two, where it took `pairs` before. The epochs' messages are steady
  // (gain_fewer_steady), so one worker is kept after the first try.
  static_assert(1.2 > governor::trailing_gain && 1.2 < governor::decisive_gain);
  governor g{2, 1ms};
  const auto during = run(g, 2000, [](std::uint32_t a) { return a == 1 ? 120.0 : 100.0; });
  const std::vector<std::uint32_t> tries = runs_at_two(during);
  REQUIRE(tries.size() > 2);
  // The first run of two is the start, and the first try's arm at two.
  for (std::size_t t = 1; t < tries.size(); ++t) CHECK(tries[t] == governor::arm_epochs);
  const std::vector<std::uint32_t> later(during.begin() + 100, during.end());
  CHECK(epochs_at(later, 1) * 100 > later.size() * 99);
  // Not a try of fewer: a computation 30% faster on two workers, tried on
  // one, takes its `pairs` arms at one (the counted epoch at one may not
  // show what one worker does yet: see governor::trailing). The arms at
  // one of a try are an arm at two apart.
  governor shares{2, 1ms};
  const auto at_two = run(shares, 2000, [](std::uint32_t a) { return a == 2 ? 1.3 : 1.0; });
  const std::vector<stretch> at_one = runs_at(at_two, 1);
  REQUIRE(at_one.size() >= 2 * governor::pairs);
  for (std::size_t t = 0; t + 1 < at_one.size(); t += governor::pairs) {
    CHECK(at_one[t].epochs == governor::arm_epochs);
    CHECK(at_one[t + 1].first - (at_one[t].first + at_one[t].epochs) == governor::arm_epochs);
  }
}

TEST_CASE("a try's first epoch far from the epoch before it decides the try") {
  // Four times as fast on two workers: a try of one ends after its first
  // epoch, and costs that one epoch.
  governor wide{2, 1ms};
  const auto during = run(wide, 2000, [](std::uint32_t a) { return a == 2 ? 40.0 : 10.0; });
  CHECK(during[1] == 2);
  CHECK(during[2] == 1);
  CHECK(during[3] == 2);
  std::uint32_t longest_run_at_one = 0;
  for (std::uint32_t e = 0, run_at_one = 0; e < during.size(); ++e) {
    run_at_one = during[e] == 1 ? run_at_one + 1 : 0;
    longest_run_at_one = std::max(longest_run_at_one, run_at_one);
  }
  CHECK(longest_run_at_one == 1);
  CHECK(epochs_at(during, 1) * 100 < during.size());
  // Decisively slower is enough to fail a try: 1.6 times as fast on one
  // worker (big), each try of two costs its first epoch.
  governor one{2, 1ms};
  run(one, 200, [](std::uint32_t a) { return a == 1 ? 16.0 : 10.0; });
  REQUIRE(one.active() == 1);
  const std::vector<std::uint32_t> tries =
      runs_at_two(run(one, 2000, [](std::uint32_t a) { return a == 1 ? 16.0 : 10.0; }));
  REQUIRE(tries.size() > 1);
  for (const std::uint32_t epochs : tries) CHECK(epochs == 1);
  // But only glaringly faster keeps the new count at once. The rate is
  // the same at both counts, and at the try's first epoch 2.9 times the
  // last epoch's (a warm-up, or a backlog the old count left): the try
  // goes on to its pairs of arms, which find no gain.
  governor warming{2, 1ms};
  std::uint32_t epoch = 0;
  const auto steps =
      run(warming, governor::first_wait + 2 * governor::pairs * governor::arm_epochs,
          [&](std::uint32_t) { return epoch++ < governor::first_wait ? 10.0 : 29.0; });
  CHECK(steps[governor::first_wait] == 1);
  CHECK(steps[governor::first_wait + 1] == 1);
  CHECK(warming.active() == 2);
}

TEST_CASE("an arm at one worker goes on until the worker runs alone, if it is close") {
  // The worker runs alone only from the third or fourth epoch after it
  // parked as the count dropped (executor::past_mark), and only its turns
  // alone show what one worker does. Here the rate at one worker is 80 for
  // two epochs, with no turn alone, and then 150, alone, as a try of one
  // worker for thread_ring runs: the arm counts the epoch alone, and the
  // try is kept, where counting the second epoch would have dropped it.
  governor g{2, 1ms};
  std::uint32_t at_one_for = 0;
  const auto alone_from_third = [&](std::uint32_t) {
    return at_one_for <= 2 ? governor::sharing::pending : governor::sharing::none;
  };
  const auto during = run(
      g, 60,
      [&](std::uint32_t a) {
        at_one_for = a == 1 ? at_one_for + 1 : 0;
        return a == 2 ? 100.0 : at_one_for <= 2 ? 80.0 : 150.0;
      },
      alone_from_third);
  const std::uint32_t first = governor::first_wait;
  for (std::uint32_t e = first; e < first + 3; ++e) CHECK(during[e] == 1);
  CHECK(during[first + 3] == 2);
  const std::vector<std::uint32_t> later(during.begin() + 30, during.end());
  CHECK(epochs_at(later, 1) == later.size());
  // Decisively slower at one worker (a flood that shares out): the arm is
  // not held there longer than arm_epochs.
  governor flood{2, 1ms};
  const auto slow = run(
      flood, 60, [](std::uint32_t a) { return a == 2 ? 100.0 : 60.0; }, governor::sharing::pending);
  for (std::uint32_t e = first; e < first + governor::arm_epochs; ++e) CHECK(slow[e] == 1);
  CHECK(slow[first + governor::arm_epochs] == 2);
  // Nor where the worker was not left alone (it parks, or the other still
  // runs): no turn alone is on its way.
  governor parks{2, 1ms};
  const auto parked = run(parks, 60, [](std::uint32_t a) { return a == 2 ? 100.0 : 80.0; });
  for (std::uint32_t e = first; e < first + governor::arm_epochs; ++e) CHECK(parked[e] == 1);
  CHECK(parked[first + governor::arm_epochs] == 2);
}

TEST_CASE("work alone with nothing to share is not tried on more workers") {
  // A chain of messages (a token round a ring) that one worker ran alone
  // and never found two messages waiting: a second worker has nothing to
  // run beside it, so no try of two, though two would measure faster here.
  governor g{2, 1ms};
  run(g, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(g.active() == 1);
  auto during = run(
      g, 2000, [](std::uint32_t a) { return a == 2 ? 80.0 : 60.0; }, governor::sharing::none);
  CHECK(epochs_at(during, 2) == 0);
  // Once it has something to share, two is tried and kept.
  during = run(
      g, 200, [](std::uint32_t a) { return a == 2 ? 80.0 : 60.0; }, governor::sharing::some);
  CHECK(during.back() == 2);
  // Nor for work of a few messages an epoch: between two long messages
  // of a fork, one waits while the other runs, as in a chain, and a
  // second worker halves the time (50 messages an epoch, 100 at two).
  static_assert(0.1 * 1000 < governor::steady_messages);
  governor fork{2, 1ms};
  run(fork, 200, [](std::uint32_t a) { return a == 1 ? 0.6 : 0.1; });
  REQUIRE(fork.active() == 1);
  during = run(
      fork, 200, [](std::uint32_t a) { return a == 2 ? 0.1 : 0.05; }, governor::sharing::none);
  CHECK(during.back() == 2);
  // Epochs that ran no turn alone tell nothing: the tries go on.
  governor unknown{2, 1ms};
  run(unknown, 200, [](std::uint32_t a) { return a == 1 ? 60.0 : 10.0; });
  REQUIRE(unknown.active() == 1);
  during = run(unknown, 200, [](std::uint32_t a) { return a == 2 ? 80.0 : 60.0; });
  CHECK(during.back() == 2);
}

TEST_CASE("a try of one worker for work with nothing to share is kept unless it loses much") {
  // thread_ring's rates at one and two workers are within a tenth: short
  // of gain_fewer_steady, but with nothing to share the second worker only
  // costs (its wakes and parks).
  static_assert(100.0 * 1000 >= governor::steady_messages);
  governor same{2, 1ms};
  auto during = run(
      same, 400, [](std::uint32_t) { return 100.0; }, governor::sharing::none);
  std::vector<std::uint32_t> later(during.begin() + 50, during.end());
  CHECK(epochs_at(later, 1) == later.size());
  // Without the knowledge, the count stays at two, as before.
  governor blind{2, 1ms};
  during = run(blind, 400, [](std::uint32_t) { return 100.0; });
  later.assign(during.begin() + 50, during.end());
  CHECK(epochs_at(later, 2) * 100 > later.size() * 90);
  // 10% slower alone: back to two.
  governor slower{2, 1ms};
  during = run(
      slower, 400, [](std::uint32_t a) { return a == 1 ? 90.0 : 100.0; }, governor::sharing::none);
  later.assign(during.begin() + 50, during.end());
  CHECK(epochs_at(later, 2) * 100 > later.size() * 90);
  // Some to share: the steady gain applies, which 5% does not reach.
  governor shared{2, 1ms};
  during = run(
      shared, 400, [](std::uint32_t a) { return a == 1 ? 105.0 : 100.0; }, governor::sharing::some);
  later.assign(during.begin() + 50, during.end());
  CHECK(epochs_at(later, 2) * 100 > later.size() * 90);
}
