#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

#include <tact/tact.hpp>
#include <tact/testing.hpp>
#include <tact/timer.hpp>
#include <tact/transactional.hpp>

// The deterministic executor: one message per step, chosen by a seeded
// schedule; a seed replays its run exactly; virtual time for timers and
// ask deadlines; inspection of what waits for an actor.
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using tact::testing::deterministic_system;
using tact::testing::schedule;

struct note : tact::message {
  note(int from, int seq) : from{from}, seq{seq} {}
  int from;
  int seq;
};

// Appends (sender, sequence) of each note to a shared log.
struct logger : tact::actor {
  logger(tact::actor_system& system, std::vector<std::pair<int, int>>& log)
      : tact::actor{system}, log{log} {}
  std::vector<std::pair<int, int>>& log;
  tact::allocation receive(note& m) {
    log.emplace_back(m.from, m.seq);
    return Nodelete;
  }
};

// Sends `count` notes to `to`, one per message it receives.
struct chatter : tact::actor {
  chatter(tact::actor_system& system, int id, logger& to) : tact::actor{system}, id{id}, to{to} {}
  struct go : tact::message {};
  int id;
  logger& to;
  int sent = 0;
  tact::allocation receive(go& m) {
    auto* n = new note{id, sent++};
    n->set_allocation(tact::allocation::Delete);
    to | *n;
    if (sent < 20) *this | m;
    return Nodelete;
  }
};

// Three chatters interleave their notes at one logger; the log is the run.
std::vector<std::pair<int, int>> chatter_run(schedule how) {
  std::vector<std::pair<int, int>> log;
  deterministic_system system{how};
  logger& sink = system.spawn<logger>(system, log);
  std::vector<chatter::go> starts(3);
  std::vector<chatter*> chatters;
  for (int id = 0; id < 3; ++id) chatters.push_back(&system.spawn<chatter>(system, id, sink));
  for (int id = 0; id < 3; ++id) *chatters[id] | starts[id];
  system.run();
  for (chatter* c : chatters) *c | tact::delete_msg;
  sink | tact::delete_msg;
  system.stop();
  return log;
}

TEST_CASE("a seed replays its run exactly, and seeds differ", "[deterministic]") {
  for (const auto kind : {schedule::policy::random, schedule::policy::pct}) {
    std::set<std::vector<std::pair<int, int>>> runs;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      INFO("seed " << seed);
      // A run is about 130 steps: PCT's change points fall inside it.
      const auto first = chatter_run({.kind = kind, .seed = seed, .steps = 130});
      REQUIRE(first.size() == 60);
      REQUIRE(chatter_run({.kind = kind, .seed = seed, .steps = 130}) == first);
      // Per-sender order holds under every schedule.
      std::vector<int> next(3, 0);
      for (const auto& [from, seq] : first) REQUIRE(seq == next[from]++);
      runs.insert(first);
    }
    CHECK(runs.size() > 10);
  }
}

TEST_CASE("TACT_SEED picks the seed when the schedule names none", "[deterministic]") {
  ::setenv("TACT_SEED", "12345", 1);
  deterministic_system system;
  ::unsetenv("TACT_SEED");
  CHECK(system.seed() == 12345);
  CHECK(deterministic_system{}.seed() != 12345);  // fresh: equal once in 2^64
  ::setenv("TACT_SEED", "twelve", 1);
  CHECK_THROWS_AS(deterministic_system{}, std::invalid_argument);
  ::unsetenv("TACT_SEED");
}

TEST_CASE("run_one runs one message; next_message looks before it runs", "[deterministic]") {
  std::vector<std::pair<int, int>> log;
  deterministic_system system{{.seed = 7}};
  logger& sink = system.spawn<logger>(system, log);
  note first{1, 0};
  note second{1, 1};
  sink | first | second;
  CHECK(system.queued_for(sink) == 2);
  note* next = system.next_message<note>(sink);
  REQUIRE(next == &first);
  CHECK(next->seq == 0);
  REQUIRE(system.run_one());
  CHECK(log == std::vector<std::pair<int, int>>{{1, 0}});
  CHECK(system.steps() == 1);
  CHECK(system.next_message<note>(sink) == &second);
  REQUIRE(system.deliver_next(sink));
  CHECK(log.size() == 2);
  CHECK_FALSE(system.run_one());
  CHECK_FALSE(system.deliver_next(sink));
  sink | tact::delete_msg;
  system.stop();
}

TEST_CASE("deliver_next runs what is queued before it in its queue, nothing else",
          "[deterministic]") {
  std::vector<std::pair<int, int>> log;
  // Two queues: a and b share one, c has the other.
  deterministic_system system{{.seed = 3}, [] {
                                auto config = tact::testing::deterministic_config();
                                config.queues = 2;
                                return config;
                              }()};
  logger& a = system.spawn<logger>(system, log);
  logger& c = system.spawn<logger>(system, log);
  logger& b = system.spawn<logger>(system, log);
  note to_a{0, 0}, to_c{2, 0}, to_b{1, 0};
  a | to_a;
  c | to_c;
  b | to_b;
  REQUIRE(system.deliver_next(b));
  CHECK(log == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}});
  CHECK(system.queued_for(c) == 1);
  system.run();
  for (logger* l : {&a, &b, &c}) *l | tact::delete_msg;
}

struct ping : tact::message {
  explicit ping(int n = 0) : n{n} {}
  int n;
};

struct clocked : tact::actor {
  explicit clocked(tact::actor_system& system) : tact::actor{system} {}
  std::vector<int> got;
  tact::allocation receive(ping& m) {
    got.push_back(m.n);
    return Nodelete;
  }
};

TEST_CASE("timers wait for virtual time to move", "[deterministic]") {
  deterministic_system system{{.seed = 1}};
  clocked& target = system.spawn<clocked>(system);
  const auto start = system.now();
  ping later{2}, sooner{1}, never{3}, tick{9};
  tact::send_after(2s, target, later);
  tact::send_after(1s, target, sooner);
  tact::timer cancelled = tact::send_after(500ms, target, never);
  tact::timer every = tact::send_every(300ms, target, tick);
  CHECK(cancelled.cancel());
  CHECK(system.pending_timers() == 3);
  CHECK(system.run() == 0);
  // A periodic timer skips a tick while its last one is still queued.
  system.advance_time(900ms);
  system.run();
  CHECK(target.got == std::vector<int>{9});
  system.advance_time(300ms);  // the 1 s one-shot, then the 1.2 s tick
  system.run();
  CHECK(target.got == std::vector<int>{9, 1, 9});
  system.advance_time(99ms);
  system.run();
  CHECK(target.got == std::vector<int>{9, 1, 9});
  CHECK(every.cancel());
  REQUIRE(system.trigger_timeout());  // the 2 s timer, whatever the clock said
  CHECK(system.now() - start == 2s);
  system.run();
  CHECK(target.got == std::vector<int>{9, 1, 9, 2});
  CHECK_FALSE(system.trigger_timeout());
  target | tact::delete_msg;
}

struct question : tact::request<int> {
  explicit question(int n = 0) : n{n} {}
  int n;
};

// Answers after `delay` of virtual time, through a timer to itself.
struct slow_oracle : tact::actor {
  explicit slow_oracle(tact::actor_system& system, std::chrono::nanoseconds delay)
      : tact::actor{system}, delay{delay} {}
  std::chrono::nanoseconds delay;
  std::vector<question*> waiting;
  ping wake;
  tact::allocation receive(question& q) {
    q.set_allocation(tact::allocation::Nodelete);  // kept until answered
    waiting.push_back(&q);
    tact::send_after(delay, *this, wake);
    return Nodelete;
  }
  tact::allocation receive(ping&) {
    question* q = waiting.front();
    waiting.erase(waiting.begin());
    q->reply(q->n * 2);
    delete q;
    return Nodelete;
  }
};

TEST_CASE("ask runs the schedule, and times out on the virtual clock", "[deterministic]") {
  deterministic_system system{{.seed = 5}};
  slow_oracle& oracle = system.spawn<slow_oracle>(system, 2s);
  const auto start = system.now();
  // The answer comes at 2 s of virtual time, within the timeout.
  auto answered = tact::ask(oracle, question{21}, 5s);
  REQUIRE(answered);
  CHECK(*answered == 42);
  CHECK(system.now() - start == 2s);
  // Here the deadline comes first: time stops there, the answer is late.
  auto late = tact::ask(oracle, question{1}, 1s);
  REQUIRE_FALSE(late);
  CHECK(late.error() == tact::ask_error::timeout);
  CHECK(system.now() - start == 3s);
  REQUIRE(system.trigger_timeout());  // the late answer, discarded safely
  system.run();
  CHECK(oracle.waiting.empty());
  oracle | tact::delete_msg;
}

// nanoseconds::max() means no deadline: `now + timeout` once overflowed
// into the past as soon as the virtual clock had moved, and the ask timed
// out at once.
TEST_CASE("an ask with no deadline waits for its answer, however far the clock has moved",
          "[deterministic]") {
  deterministic_system system{{.seed = 5}};
  slow_oracle& oracle = system.spawn<slow_oracle>(system, 2s);
  system.advance_time(std::chrono::hours{24 * 365});
  const auto start = system.now();
  auto answered = tact::ask(oracle, question{21}, std::chrono::nanoseconds::max());
  REQUIRE(answered);
  CHECK(*answered == 42);
  CHECK(system.now() - start == 2s);
  // With nothing left that could answer, it gives up without moving the
  // clock to its end.
  struct silent : tact::actor {
    explicit silent(tact::actor_system& s) : tact::actor{s} {}
    tact::allocation receive(question&) { return Nodelete; }
  };
  silent& mute = system.spawn<silent>(system);
  auto never = tact::ask(mute, question{1}, std::chrono::nanoseconds::max());
  REQUIRE_FALSE(never);
  CHECK(system.now() - start == 2s);
  oracle | tact::delete_msg;
  mute | tact::delete_msg;
}

// Asks the oracle from inside a behaviour, and records the answer.
struct asker : tact::actor {
  asker(tact::actor_system& system, slow_oracle& oracle) : tact::actor{system}, oracle{oracle} {}
  slow_oracle& oracle;
  std::vector<int> answers;
  tact::allocation receive(ping& m) {
    auto a = tact::ask(oracle, question{m.n}, 10s);
    answers.push_back(a ? *a : -1);
    return Nodelete;
  }
};

TEST_CASE("an ask inside a behaviour runs other queues while its actor waits",
          "[deterministic]") {
  deterministic_system system{{.seed = 11}};
  slow_oracle& oracle = system.spawn<slow_oracle>(system, 1s);
  asker& a = system.spawn<asker>(system, oracle);
  ping first{1}, second{2};
  a | first | second;
  // The behaviour's ask runs nested steps and moves the clock: from the
  // test's side the system just goes idle.
  system.run();
  CHECK(a.answers == std::vector<int>{2, 4});
  a | tact::delete_msg;
  oracle | tact::delete_msg;
}

struct add {};
struct get {};

tx::behaviour counter(int n) {
  return {[n](const tx::actor_ref&, add) { tx::become(counter(n + 1)); },
          [n](const tx::actor_ref& customer, get) { tx::send(customer, n); }};
}

TEST_CASE("transactional actors run on the deterministic executor", "[deterministic]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    deterministic_system system{{.seed = seed}};
    const tx::actor_ref c = tx::spawn(system, counter(0));
    for (int i = 0; i < 10; ++i) tx::send(c, tx::actor_ref{}, add{});
    system.run();
    auto n = tx::ask<int>(system, c, 1s, get{});
    REQUIRE(n);
    CHECK(*n == 10);
    CHECK(system.stats().total.tx_commits == 12);  // adds, get, the asker's customer
  }
}

TEST_CASE("what needs threads is refused", "[deterministic]") {
  deterministic_system system{{.seed = 1}};
  CHECK_THROWS_AS(tact::sponsor{system}, std::logic_error);
}

// PCT finds an ordering that needs one actor to run its two messages before
// another runs its one, in few runs.
TEST_CASE("PCT schedules reach a rare ordering", "[deterministic]") {
  int found = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const auto log = chatter_run({.kind = schedule::policy::pct, .seed = seed, .steps = 100});
    // Chatter 2's whole output before chatter 0's first note.
    const auto first0 = std::find(log.begin(), log.end(), std::pair{0, 0});
    const auto last2 = std::find(log.begin(), log.end(), std::pair{2, 19});
    if (last2 < first0) ++found;
  }
  CHECK(found > 0);
}

}  // namespace
