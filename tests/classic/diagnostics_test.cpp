// Debug checks (meson option `checks`, on in the test build).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "support/in_child.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

using Catch::Matchers::Contains;
using kind = tact::diagnostic_kind;
using tact::test::child_outcome;
using tact::test::in_child;

namespace {

struct note : tact::message {};

struct listener : tact::actor {
  int received = 0;
  tact::allocation receive(note&) {
    ++received;
    return Nodelete;
  }
};

struct dying_note : note {
  explicit dying_note(std::atomic<int>& destroyed) : destroyed{&destroyed} {
    set_allocation(tact::allocation::Delete);
  }
  ~dying_note() override { destroyed->fetch_add(1); }
  std::atomic<int>* destroyed;
};

// `l`, once it has finished.
listener& finished(tact::actor_system& system, listener& l) {
  l | tact::finished_msg;
  system.await_quiescence();
  REQUIRE(l.finished());
  return l;
}

}  // namespace

TEST_CASE("the test build has the debug checks on") { STATIC_REQUIRE(tact::build::checks); }

TEST_CASE("a send to a finished actor is reported and dropped, never delivered") {
  tact::test::diagnostics_log log;
  std::atomic<int> destroyed{0};
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  listener l;
  finished(system, l) | *new dying_note{destroyed};
  system.stop();

  CHECK(l.received == 0);
  CHECK(destroyed == 1);  // the dead letter still got its allocation action
  CHECK(system.stats().total.dead_letters == 1);
  CHECK(system.stats().total.messages_rejected == 1);
  CHECK(tact::test::conservation_of(system));
  const auto reports = log.of(kind::send_to_finished);
  REQUIRE(reports.size() == 1);
  CHECK_THAT(reports[0].text, Contains("dying_note") && Contains("listener"));
}

TEST_CASE("a send_after to a finished actor is a dead letter, not a message never sent") {
  tact::test::diagnostics_log log;
  std::atomic<int> destroyed{0};
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  listener l;
  const tact::timer refused =
      tact::send_after(std::chrono::milliseconds{1}, finished(system, l), *new dying_note{destroyed});
  CHECK_FALSE(refused);
  CHECK(destroyed == 1);  // freed at once, as a send's dead letter is
  system.stop();

  CHECK(system.stats().total.dead_letters == 1);
  CHECK(log.count(kind::send_to_finished) == 1);
  CHECK(log.count(kind::message_never_sent) == 0);  // it was sent, to no one
}

TEST_CASE("a message queued behind a poison pill is reported, and counted at shutdown") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  listener l;
  note early;
  note behind;
  l | early | tact::finished_msg | behind;
  system.stop();
  CHECK(l.received == 1);
  CHECK(log.count(kind::delivery_to_finished) == 1);
  const auto summary = log.of(kind::messages_unreceived);
  REQUIRE(summary.size() == 1);
  CHECK_THAT(summary[0].text, Contains("1 message(s) were sent but never received"));
}

TEST_CASE("an actor deleted with messages queued behind it is freed only after they are dropped") {
  tact::test::diagnostics_log log;
  struct doomed : listener {
    explicit doomed(const tact::test::diagnostics_log& log, std::size_t& late_at_death)
        : log{&log}, late_at_death{&late_at_death} {}
    ~doomed() override { *late_at_death = log->count(kind::delivery_to_finished); }
    const tact::test::diagnostics_log* log;
    std::size_t* late_at_death;
  };
  // Sent from one behaviour on the only worker, the pill and the notes are
  // all queued before any of them is delivered. (Sent from this thread,
  // later sends could reach an actor already deleted: no check can make a
  // dangling reference safe.)
  struct burst : tact::actor {
    doomed* target = nullptr;
    std::vector<note> behind = std::vector<note>(5);
    tact::allocation receive(note&) {
      *target | tact::delete_msg;
      for (note& n : behind) *target | n;
      return Finished;
    }
  };
  std::size_t late_at_death = 0;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  auto& d = system.spawn<doomed>(log, late_at_death);
  burst b;
  b.target = &d;
  note go;
  b | go;
  system.stop();
  CHECK(late_at_death == 5);  // the memory outlived every late delivery
  CHECK(log.count(kind::delivery_to_finished) == 5);
  CHECK(system.stats().total.dead_letters == 5);
}

TEST_CASE("a message destroyed without ever being sent is reported once, then counted") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  { note forgotten; }
  CHECK(log.count(kind::message_never_sent) == 1);
  {
    listener l;
    note sent;
    l | sent | tact::finished_msg;
    system.await_quiescence();
  }
  CHECK(log.count(kind::message_never_sent) == 1);  // sent messages are not reported
  for (int i = 0; i < 1000; ++i) note also_forgotten;
  CHECK(log.count(kind::message_never_sent) == 1);  // not flooded
  system.stop();
  const auto reports = log.of(kind::message_never_sent);
  REQUIRE(reports.size() == 2);
  CHECK_THAT(reports[1].text, Contains("1001 messages in all"));
}

// A reply kept ready in its actor, and a type whose every object may go
// unsent: neither is reported, while a forgotten message still is.
struct spare_reply : tact::message {
  spare_reply() { allow_unsent(); }
};

TEST_CASE("a message that allows going unsent is not reported when destroyed unsent") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  {
    note kept_ready;
    kept_ready.allow_unsent();
    spare_reply by_type;
  }
  CHECK(log.count(kind::message_never_sent) == 0);
  {
    note copied;
    copied.allow_unsent();
    note copy{copied};  // a copy is a new message: unsent and not allowed to be
  }
  system.stop();
  CHECK(log.count(kind::message_never_sent) == 1);
  CHECK_THAT(log.of(kind::message_never_sent)[0].text, Contains("allow_unsent()"));
}

TEST_CASE("an actor destroyed before it finished is reported and not waited for") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  { listener careless; }
  system.stop();  // returns: the destroyed actor no longer counts as alive
  CHECK(log.count(kind::actor_destroyed_unfinished) == 1);
  CHECK(log.count(kind::idle_with_live_actors) == 0);
}

namespace {

struct poke : tact::message {};

// Its behaviour runs a second delivery to itself, as an executor that broke
// one message at a time would.
struct reentrant : tact::actor {
  explicit reentrant(tact::actor_system& system) : tact::actor{system} {}
  poke inner;
  tact::allocation receive(poke& p) {
    if (&p != &inner) tact::detail::deliver<reentrant, poke>(this, &inner);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a delivery to an actor whose behaviour is still running aborts, naming both types") {
  const child_outcome outcome = in_child([] {
    tact::actor_system system{{.workers = 1}};
    reentrant a{system};
    poke first;
    a | first;
    system.await_quiescence();
    a | tact::finished_msg;  // not reached while the check works
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("reentrant") && Contains("poke") &&
                                Contains("one message at a time"));
}
