#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>
#include <tact/testing.hpp>
#include <tact/transactional.hpp>

// A parallel actor runs on whichever queue its message came to, so two of
// its invocations may run on different queues, one of them the queue of
// the actor it sends to. Its sends must still arrive in the order its
// invocations committed them: a later send must not join the batch in
// hand of the receiver's queue ahead of an earlier one that waits in that
// queue's mailbox. Two queues and the default local batch; the schedules
// that interleave the two queues are the ones that matter.
namespace {

namespace tx = tact::tx;
using tact::testing::deterministic_system;

tact::system_config two_queues() {
  tact::system_config config = tact::testing::deterministic_config();
  config.queues = 2;
  config.local_batch = tact::defaults::local_batch;
  return config;
}

struct filler {};

struct value_note : tact::message {
  explicit value_note(int v) : tact::message{tact::allocation::Delete}, value{v} {}
  int value;
};

struct logger : tact::actor {
  logger(tact::actor_system& system, std::vector<int>& log) : tact::actor{system}, log{log} {}
  std::vector<int>& log;
  tact::allocation receive(value_note& m) {
    log.push_back(m.value);
    return Nodelete;
  }
};

// The values a parallel relay committed, in commit order, and what its
// receiver saw, in arrival order.
struct run_log {
  std::vector<int> committed;
  std::vector<int> arrived;
};

// Queue 0: the receiver's, then the filler, then the relay's first
// message; queue 1: the relay's second. Round robin gives that: the
// receiver takes ticket 0, the relay 1, and the two sends from outside to
// the parallel relay 2 and 3.
template <class Fill>
void two_sends(deterministic_system& system, const tx::actor_ref& relay, Fill fill) {
  fill();
  tx::send(relay, 1);
  tx::send(relay, 2);
  system.run();
}

// Runs `one(system, log)` under 40 schedules. The order at stake: the
// relay's second message, on queue 1, commits first, so its send waits in
// queue 0's mailbox while the first message runs in queue 0's batch. Some
// seeds must reach it, or the test proves nothing.
template <class One>
void under_seeds(One one) {
  int reached = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    auto log = std::make_shared<run_log>();
    deterministic_system system{{.seed = seed}, two_queues()};
    one(system, log);
    REQUIRE(log->committed.size() == 2);
    reached += log->committed == std::vector<int>{2, 1} ? 1 : 0;
  }
  CHECK(reached > 0);
}

// A parallel relay whose every commit sends `per_commit` values to a
// serialized sink, in order: v * 1,000, v * 1,000 + 1, ...
void relayed_in_commit_order(int per_commit) {
  under_seeds([per_commit](deterministic_system& system, const std::shared_ptr<run_log>& log) {
    const tx::actor_ref sink = tx::spawn(
        system,
        {[log](int v) { tx::on_commit([log, v] { log->arrived.push_back(v); }); },
         [](filler) {}},
        tx::mode::serialized);
    const tx::actor_ref relay = tx::spawn(system, {[log, sink, per_commit](int v) {
      for (int i = 0; i < per_commit; ++i) tx::send(sink, v * 1'000 + i);
      tx::on_commit([log, v] { log->committed.push_back(v); });
    }});
    two_sends(system, relay, [&] { tx::send(sink, filler{}); });
    std::vector<int> expected;
    for (const int v : log->committed)
      for (int i = 0; i < per_commit; ++i) expected.push_back(v * 1'000 + i);
    CHECK(log->arrived == expected);
  });
}

TEST_CASE("a parallel actor's sends to a serialized actor arrive in commit order",
          "[transactional][order]") {
  relayed_in_commit_order(1);
}

// The same with a run per commit: sixteen or more consecutive sends to one
// serialized actor go as one envelope (docs/transactional.md,
// "Execution"), which must not join the batch in hand either.
TEST_CASE("a parallel actor's runs of sends to a serialized actor arrive in commit order",
          "[transactional][order]") {
  relayed_in_commit_order(2 * static_cast<int>(tact::defaults::claim_joins));
}

TEST_CASE("a parallel actor's classic sends from on_commit arrive in commit order",
          "[transactional][order]") {
  under_seeds([](deterministic_system& system, const std::shared_ptr<run_log>& log) {
    logger& sink = system.spawn<logger>(system, log->arrived);
    // The way a handler reaches a classic actor.
    const tx::actor_ref relay = tx::spawn(system, {[log, &sink](int v) {
      tx::on_commit([log, &sink, v] {
        log->committed.push_back(v);
        tact::send(sink, *new value_note{v});
      });
    }});
    two_sends(system, relay, [&] { tact::send(sink, *new value_note{0}); });
    std::vector<int> arrived(log->arrived.begin() + 1, log->arrived.end());  // after the filler
    CHECK(arrived == log->committed);
    sink | tact::delete_msg;
  });
}

}  // namespace
