// With checks on, breaking a rule of docs/concepts.md, "Lifetimes" ends
// the process with a line that names what was misused and the rule,
// instead of a use of freed memory. Each program runs in a child process.
// Built only with checks.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

#include <tact/tact.hpp>
#include <tact/testing.hpp>
#include <tact/transactional.hpp>

#include "support/in_child.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using tact::test::in_child;
namespace tx = tact::tx;

namespace {

struct note : tact::message {};
struct question : tact::request<int> {};

struct worker : tact::actor {
  using tact::actor::actor;
  tact::allocation receive(note&) { return Nodelete; }
  tact::allocation receive(question& q) {
    q.reply(1);
    return Nodelete;
  }
};

// A finished actor that outlives its system, as a program may keep one.
worker& finished_survivor() {
  auto* survivor = new worker{*new tact::actor_system{{.workers = 1}}};
  tact::actor_system& system = survivor->system();
  *survivor | tact::finished_msg;
  delete &system;
  return *survivor;
}

// A reference that outlives its actor's system.
tx::actor_ref surviving_ref() {
  tact::actor_system system{{.workers = 1}};
  return tx::spawn(system, {[](int) {}});
}

}  // namespace

TEST_CASE("a send through an actor_ref that outlived its system aborts, naming the message") {
  const auto outcome = in_child([] { tx::send(surviving_ref(), 42); });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("a (int) message was sent to a transactional actor after "
                                     "its actor_system was destroyed") &&
                                Contains("only to be copied, compared or dropped"));
}

TEST_CASE("a send from a live system through an actor_ref that outlived its own aborts") {
  const auto outcome = in_child([] {
    const tx::actor_ref stale = surviving_ref();
    tact::actor_system system{{.workers = 1}};
    const tx::actor_ref relay =
        tx::spawn(system, {[stale](int n) { tx::send(stale, n); }}, tx::mode::serialized);
    tx::send(relay, 1);  // its commit posts to the destroyed system
    system.await_quiescence();
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("a (int) message was sent to a transactional actor after"));
}

TEST_CASE("a timer for an actor_ref that outlived its system aborts as it starts") {
  const auto outcome = in_child([] { auto t = tx::send_after(1h, surviving_ref(), 1); });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("a timer or a widget was made for a transactional actor "
                                     "after its actor_system was destroyed"));
}

TEST_CASE("a send to a finished actor that outlived its system aborts, naming both types") {
  const auto outcome = in_child([] {
    worker& survivor = finished_survivor();
    note n;
    survivor | n;
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error,
             Contains("note was sent to actor") && Contains("worker") &&
                 Contains("after its actor_system was destroyed; a finished actor may outlive "
                          "its system, but nothing may be sent to it"));
}

TEST_CASE("a timer for a finished actor that outlived its system aborts as it starts") {
  const auto outcome = in_child([] {
    worker& survivor = finished_survivor();
    note n;
    auto t = tact::send_after(1h, survivor, n);
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("after its actor_system was destroyed"));
}

TEST_CASE("an ask of a finished actor that outlived its system aborts before it sends") {
  const auto outcome = in_child([] { (void)tact::ask(finished_survivor(), question{}, 1h); });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("an ask was made on an actor_system that had been destroyed"));
}

TEST_CASE("destroying a system while a sponsor of it lives aborts, saying what to destroy first") {
  const bool dedicated = GENERATE(false, true);
  const auto outcome = in_child([dedicated] {
    auto* system = new tact::actor_system{{.workers = 1}};
    if (dedicated)
      new tact::dedicated_sponsor{*system};
    else
      new tact::sponsor{*system};
    delete system;
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error,
             Contains("1 sponsor(s) of an actor_system were still alive when the system was "
                      "destroyed; destroy a sponsor before its system"));
}

TEST_CASE("destroying a system while an actor its sponsor abandoned lives aborts") {
  const auto outcome = in_child([] {
    auto* system = new tact::actor_system{{.workers = 1}};
    {
      tact::sponsor bound{*system};
      bound.spawn<worker>();  // never finished, never destroyed
    }
    delete system;
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("1 actor(s) that had not finished were still alive when "
                                     "their actor_system was destroyed"));
}

TEST_CASE("destroying a deterministic system while an actor its stop() left lives aborts") {
  const auto outcome = in_child([] {
    tact::testing::deterministic_system system;
    system.spawn<worker>();
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("1 actor(s) that had not finished were still alive"));
}

TEST_CASE("a deterministic system ended by a failing test leaves its actors without aborting") {
  const auto outcome = in_child([] {
    try {
      tact::testing::deterministic_system system;
      system.spawn<worker>();
      throw 1;  // as a failed REQUIRE does
    } catch (int) {
    }
  });
  CHECK_FALSE(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("deterministic_system seed"));
}

TEST_CASE("what may outlive its system does so without a word") {
  const auto outcome = in_child([] {
    tx::actor_ref ref;
    std::unique_ptr<worker> survivor;
    tact::timer pending;
    note kept;
    {
      tact::actor_system system{{.workers = 1}};
      {
        tact::sponsor bound{system};  // destroyed first, with its actor finished
        bound.spawn<worker>() | tact::delete_msg;
        bound.run_until_quiescent();
      }
      survivor = std::make_unique<worker>(system);
      ref = tx::spawn(system, {[](int) {}});
      pending = tact::send_after(1h, *survivor, kept);
      *survivor | tact::finished_msg;
    }
    tx::actor_ref copy = ref;
    ref.reset();
    copy.reset();
    pending.cancel();
    pending = {};
    survivor.reset();
  });
  CHECK_FALSE(outcome.aborted);
  CHECK(outcome.error.empty());
}

TEST_CASE("a message never sent and destroyed after its system is reported without aborting") {
  const auto outcome = in_child([] {
    auto unsent = std::make_unique<note>();
    { tact::actor_system system{{.workers = 1}}; }
    unsent.reset();
  });
  CHECK_FALSE(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("a message was destroyed without ever being sent, with no "
                                     "actor_system running"));
}
