// The executor as the actor models see it (src/executor/seam.hpp): the
// runner on this thread and its queue in hand, same-queue appends and
// holding them, the drops of envelopes that never run, and the transactional
// model's statistics, kept on its own side of the seam.
#include "executor/seam.hpp"
#include "transactional/domain.hpp"

// What the actor models include must not pull in Boost (the fibers stay
// behind the runner).
#if defined(BOOST_VERSION)
#error "the actor models' seam pulls in a Boost header"
#endif

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <utility>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"

namespace tx = tact::tx;
using tact::detail::executor;
using tact::detail::runner;

namespace {

struct probe : tact::message {};

// Records what the seam says while its behaviour runs.
struct looker : tact::actor {
  looker(tact::actor_system& system, executor& other) : tact::actor{system}, other_{other} {}

  tact::allocation receive(probe&) {
    executor& ex = tact::detail::executor_of(system());
    const runner* r = tact::detail::this_runner(ex);
    named_runner = r != nullptr && &r->owner() == &ex;
    in_hand = r != nullptr ? r->current_queue() : runner::no_queue;
    own_queue = tact::detail::actor_access::queue_of(*this);
    other_runner_seen = tact::detail::this_runner(other_) != nullptr;
    return Nodelete;
  }

  bool named_runner = false;
  bool other_runner_seen = true;
  std::uint32_t in_hand = runner::no_queue;
  std::uint32_t own_queue = 0;

 private:
  executor& other_;
};

struct hop : tact::message {};

// Sends `out` on to `next` (an actor of the same queue), holding appends
// or not; the last of the line (no `next`) keeps what it gets.
struct relay : tact::actor {
  relay(tact::actor_system& system, relay* next, hop* out, bool hold)
      : tact::actor{system}, next_{next}, out_{out}, hold_{hold} {}

  tact::allocation receive(hop&) {
    if (next_ == nullptr) return Nodelete;
    if (hold_) {
      const runner::appends_held held{
          *tact::detail::this_runner(tact::detail::executor_of(system()))};
      *next_ | *out_;
    } else {
      *next_ | *out_;
    }
    return Nodelete;
  }

 private:
  relay* next_;
  hop* out_;
  bool hold_;
};

template <int N>
void fake_run(void*, void*) noexcept {}

}  // namespace

TEST_CASE("inside a behaviour the seam names the runner and the actor's queue in hand") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system other{{.workers = 1}};
  tact::actor_system system{{.workers = workers}};
  executor& ex = tact::detail::executor_of(system);
  CHECK(tact::detail::this_runner(ex) == nullptr);  // the main thread runs none
  looker a{system, tact::detail::executor_of(other)};
  probe p;
  a | p | tact::finished_msg;
  system.stop();
  CHECK(a.named_runner);
  CHECK(a.in_hand == a.own_queue);
  CHECK_FALSE(a.other_runner_seen);  // a runner belongs to one executor
  other.stop();
}

TEST_CASE("a send to the queue in hand joins the batch, unless appends are held") {
  const bool hold = GENERATE(false, true);
  tact::actor_system system{{.workers = 1, .queues = 1}};  // one queue: both actors on it
  hop start, on;
  relay last{system, nullptr, nullptr, false};
  relay first{system, &last, &on, hold};
  first | start;
  system.await_quiescence();
  const tact::worker_stats total = system.stats().total;
  CHECK(total.local_sends == (hold ? 0u : 1u));
  CHECK(total.messages_sent == 2);  // main's, and first's (appended or queued)
  CHECK(total.messages_processed == 2);
  first | tact::finished_msg;
  last | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
}

// One table for the process, without bound: the classic model registers a
// drop per (actor, message) pair, more than any fixed table could hold.
TEST_CASE("an envelope that never runs goes to the drop registered for its run function") {
  static int dropped_first = 0;
  static int dropped_second = 0;
  constexpr int kinds = 64;
  [&]<int... k>(std::integer_sequence<int, k...>) {
    (tact::detail::on_discard(&fake_run<k>,
                              [](const tact::detail::envelope&) noexcept {
                                ++dropped_first;
                                return 1u;
                              }),
     ...);
  }
  (std::make_integer_sequence<int, kinds>{});
  tact::detail::on_discard(&fake_run<0>, [](const tact::detail::envelope&) noexcept {
    ++dropped_second;  // never: the first registration stays
    return 1u;
  });
  for (int round = 0; round < 2; ++round) {  // two systems, one table
    tact::actor_system system{{.workers = 1}};
    executor& ex = tact::detail::executor_of(system);
    {
      tact::sponsor never_run{system};  // its queue is run by nobody but it
      int target = 0;
      tact::detail::post(ex, never_run.home(), &target, nullptr, &fake_run<0>);
      tact::detail::post(ex, never_run.home(), &target, nullptr, &fake_run<kinds - 1>);
      tact::detail::post(ex, never_run.home(), &target, nullptr, &fake_run<kinds>);  // none
    }
    system.stop();
  }
  CHECK(dropped_first == 4);
  CHECK(dropped_second == 0);
}

TEST_CASE("transactional statistics are kept per worker and add up to the total") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system system{{.workers = workers}};
  constexpr int rounds = 2000;
  const tx::actor_ref counter = tx::spawn(system, tx::behaviour{[](int left) {
                                            if (left > 0) tx::send(tx::self(), left - 1);
                                          }});
  tx::send(counter, rounds);
  const tx::actor_ref empty;
  tx::send(empty, 1);  // dropped: counted outside any worker
  system.await_quiescence();
  const tact::system_stats s = system.stats();
  std::uint64_t dispatched = 0;
  std::uint64_t committed = 0;
  for (const tact::worker_stats& w : s.workers) {
    dispatched += w.tx_dispatches;
    committed += w.tx_commits;
  }
  CHECK(s.total.tx_dispatches == rounds + 1);
  CHECK(dispatched == s.total.tx_dispatches);
  CHECK(committed == s.total.tx_commits);
  CHECK(s.total.tx_dropped == 1);
  CHECK(s.total.messages_rejected == 1);
  system.stop();
  CHECK(tact::test::conservation_of(system));
}
