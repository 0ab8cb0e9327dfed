// Running out of memory at every allocation of a small scenario in turn:
// the k-th allocation fails, for each k, and the scenario must see a clean
// std::bad_alloc (from the call that allocated) or a reported behaviour
// exception, never a crash, a hang, a leak (AddressSanitizer checks at
// exit, and a census counts the scenario's actors and messages), or a lost
// invariant (conservation, per-sender FIFO, a transactional counter that
// counts exactly its committed becomes).
//
// Allocations count on this thread while a step of the part under test
// runs, and on any thread inside the scenario's behaviours and handlers;
// the engine's own malloc calls (copy queues) count too. The scenario waits
// for quiescence after every step, so the k-th allocation is the same one
// from run to run, nearly: a run that allocates less is counted as such.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <thread>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/replaced_allocation.hpp"
#include "support/test_support.hpp"

namespace {

constinit thread_local bool counting = false;
std::atomic<std::int64_t> left_before_failure{-1};  // negative: no failure armed
std::atomic<std::uint64_t> counted{0};

}  // namespace

// The process's allocations, the engine's malloc included (see
// support/replaced_allocation.hpp): counted while `counting`, and the
// armed one fails.
bool tact::test::allocation_fails() noexcept {
  if (!counting) return false;
  counted.fetch_add(1, std::memory_order_relaxed);
  return left_before_failure.fetch_sub(1, std::memory_order_relaxed) == 0;
}

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using tact::test::eventually;
using tact::test::sequenced;

// A timeout that is a failure, never a wait that passes.
constexpr auto patient = 60s;

// Allocations on this thread count while it lives.
class counted_here : tact::test::flag_scope {
 public:
  counted_here() noexcept : flag_scope{counting} {}
};

// Objects of the scenario alive now: zero once it is over, or one leaked.
std::atomic<std::int64_t> live_actors{0};
std::atomic<std::int64_t> live_messages{0};
std::atomic<std::int64_t> live_behaviours{0};

// Captured by a behaviour, to count it.
struct behaviour_token {
  behaviour_token() noexcept { live_behaviours.fetch_add(1, std::memory_order_relaxed); }
  behaviour_token(const behaviour_token&) noexcept {
    live_behaviours.fetch_add(1, std::memory_order_relaxed);
  }
  behaviour_token& operator=(const behaviour_token&) = delete;
  ~behaviour_token() { live_behaviours.fetch_sub(1, std::memory_order_relaxed); }
};

struct note : sequenced {
  note(std::uint64_t sender, std::uint64_t seq) : sequenced{sender, seq} {
    set_allocation(tact::allocation::Delete);
    live_messages.fetch_add(1, std::memory_order_relaxed);
  }
  ~note() override { live_messages.fetch_sub(1, std::memory_order_relaxed); }
};

struct count_query : tact::request<std::uint64_t> {
  count_query() { live_messages.fetch_add(1, std::memory_order_relaxed); }
  count_query(const count_query& other) : request{other} {
    live_messages.fetch_add(1, std::memory_order_relaxed);
  }
  count_query& operator=(const count_query&) = delete;
  ~count_query() override { live_messages.fetch_sub(1, std::memory_order_relaxed); }
};
struct tick : tact::message {};

struct tally;
// Asks `to`, from inside a behaviour, how much it received.
struct ask_peer : tact::message {
  tally* to = nullptr;
};
// Sends `count` notes to `to` (another queue's actor: through its mailbox)
// and as many to itself (appended to the batch in hand), from a behaviour.
struct fan_out : tact::message {
  tally* to = nullptr;
  std::uint64_t count = 0;
};

struct tally : tact::actor {
  tally() { live_actors.fetch_add(1, std::memory_order_relaxed); }
  ~tally() override { live_actors.fetch_sub(1, std::memory_order_relaxed); }

  tact::allocation receive(sequenced& m) {
    fifo.accept(m);  // the test's own bookkeeping: not counted
    return Nodelete;
  }
  tact::allocation receive(count_query& q) {
    counted_here scope;
    q.reply(fifo.received());
    return Nodelete;
  }
  tact::allocation receive(fan_out& f) {
    counted_here scope;
    for (std::uint64_t i = 0; i < f.count; ++i) {
      send_note(*f.to, 1, fanned);
      send_note(*this, 2, fanned_to_self);
    }
    return Nodelete;
  }
  // Owned here until the send takes it: a send that throws leaves it ours,
  // and the next one takes its number.
  static void send_note(tally& to, std::uint64_t sender, std::uint64_t& sent) {
    std::unique_ptr<note> m = std::make_unique<note>(sender, sent);
    to | *m;
    m.release();
    ++sent;
  }
  tact::allocation receive(ask_peer& a) {
    counted_here scope;
    const auto answer = tact::ask(*a.to, count_query{}, patient);
    asked = answer ? std::optional<std::uint64_t>{*answer} : std::nullopt;
    return Nodelete;
  }
  tact::allocation receive(tick&) {
    ticks.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }

  tact::test::fifo_check fifo;
  std::uint64_t fanned = 0;  // notes this one sent `to` that left
  std::uint64_t fanned_to_self = 0;
  std::optional<std::uint64_t> asked;
  std::atomic<int> ticks{0};
};

struct hold : tact::message {};

// Keeps the worker in a behaviour until released, so that an ask from
// outside runs its answer on the asking thread (a guest worker).
struct holder : tact::actor {
  holder() { live_actors.fetch_add(1, std::memory_order_relaxed); }
  ~holder() override { live_actors.fetch_sub(1, std::memory_order_relaxed); }
  tact::allocation receive(hold&) {
    holding.store(true, std::memory_order_release);
    while (!released.load(std::memory_order_acquire)) std::this_thread::yield();
    return Nodelete;
  }
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
};

struct increment {};
struct get {};

// A transactional counter whose every increment becomes (allocates a
// behaviour) inside the counted scope.
tx::behaviour counter(int n) {
  return {[n, token = behaviour_token{}](increment) {
            counted_here scope;
            tx::become(counter(n + 1));
          },
          [n](const tx::actor_ref& customer, get) {
            counted_here scope;
            tx::send(customer, n);
          }};
}

// Whether `error` is a failed ask whose behaviour ran out of memory.
template <class T>
bool out_of_memory(const tact::ask_result<T>& r) {
  if (r || r.error() != tact::ask_error::failed) return false;
  try {
    std::rethrow_exception(r.exception());
  } catch (const std::bad_alloc&) {
    return true;
  } catch (...) {
    return false;
  }
}

// What one run saw; the test thread checks it (never from a worker).
struct outcome {
  bool reached = false;  // the armed allocation happened (a run may allocate less)
  int failed_step = -1;  // the step whose call threw bad_alloc, if any
  bool started = false;  // the system was made
  bool unexpected = false;  // an exception other than bad_alloc, or a wrong answer
  std::uint64_t behaviour_failures = 0;  // bad_alloc reported from behaviours
  std::uint64_t other_diagnostics = 0;
  std::uint64_t rollbacks = 0;
  bool conserved = true;
  bool fifo_clean = true;
  bool sends_arrived = true;
  bool counter_consistent = true;
};

std::atomic<std::uint64_t> reported_bad_alloc{0};
std::atomic<std::uint64_t> reported_other{0};

void on_diagnostic(const tact::diagnostic& d) noexcept {
  if (d.kind == tact::diagnostic_kind::behaviour_exception && d.exception) {
    try {
      std::rethrow_exception(d.exception);
    } catch (const std::bad_alloc&) {
      reported_bad_alloc.fetch_add(1, std::memory_order_relaxed);
      return;
    } catch (...) {
    }
  }
  reported_other.fetch_add(1, std::memory_order_relaxed);
}

// The parts of the scenario; each test enumerates the allocations of some.
enum part : unsigned {
  lifecycle = 1,  // the system's start and stop (uncounted otherwise)
  sends = 2,      // actors spawned, messages sent from outside and from a behaviour
  asks_inside = 4,
  asks_outside = 8,
  transactional = 16,  // spawn, sends, becomes, ask
  timers = 32,         // one that fires, one cancelled
};

// Runs the scenario's `parts` with the k-th counted allocation failing
// (k = 0: none).
outcome run_scenario(unsigned parts, std::int64_t k) {
  outcome out;
  reported_bad_alloc = 0;
  reported_other = 0;
  left_before_failure.store(k - 1, std::memory_order_relaxed);
  int step = 0;
  // One step of a part: its allocations count on this thread (if the part
  // is the test's); bad_alloc ends it.
  const auto attempt = [&](unsigned in_part, auto&& body) {
    ++step;
    try {
      std::optional<counted_here> scope;
      if ((parts & in_part) != 0) scope.emplace();
      body();
    } catch (const std::bad_alloc&) {
      if (out.failed_step < 0) out.failed_step = step;
    } catch (...) {
      out.unexpected = true;
    }
  };
  const auto done = [&] {
    out.reached = left_before_failure.exchange(-1) < 0;
    out.behaviour_failures = reported_bad_alloc.load();
    out.other_diagnostics = reported_other.load();
    return out;
  };

  // The scenario's own messages, alive until its end (timers included),
  // made only by the parts that send them.
  std::optional<fan_out> fan;
  std::optional<ask_peer> ask_b;
  std::optional<hold> held;
  std::optional<tick> timed;
  std::optional<tick> never;
  std::optional<tact::actor_system> system;
  // One worker, two queues: `h` holds the worker on queue 0 while the
  // asking thread runs `a`'s queue, 1.
  attempt(lifecycle, [&] {
    system.emplace(tact::system_config{.workers = 1, .queues = 2, .on_diagnostic = on_diagnostic});
  });
  if (!system) return done();
  out.started = true;
  holder* h = nullptr;
  tally* a = nullptr;
  tally* b = nullptr;
  // The actors the scenario needs, on queues 0, 1 and 0: made again if a
  // try fails.
  while (h == nullptr) attempt(sends, [&] { h = &system->spawn<holder>(); });
  while (a == nullptr) attempt(sends, [&] { a = &system->spawn<tally>(); });
  while (b == nullptr) attempt(sends, [&] { b = &system->spawn<tally>(); });
  system->await_quiescence();

  std::uint64_t sent_to_a = 0;
  if ((parts & sends) != 0) {
    // Sends from outside: a note that could not be made or sent is not
    // counted, and the next one takes its number.
    for (int i = 0; i < 40; ++i)
      attempt(sends, [&] {
        std::unique_ptr<note> m = std::make_unique<note>(0, sent_to_a);
        *a | *m;
        m.release();
        ++sent_to_a;
      });
    system->await_quiescence();
    // Sends from a behaviour, which a failure ends (reported).
    fan.emplace();
    fan->to = b;
    fan->count = 40;
    attempt(sends, [&] { *a | *fan; });
    system->await_quiescence();
  }

  if ((parts & asks_outside) != 0) {
    held.emplace();
    *h | *held;
    if (!eventually([&] { return h->holding.load(std::memory_order_acquire); }))
      out.unexpected = true;
    attempt(asks_outside, [&] {
      const auto r = tact::ask(*a, count_query{}, patient);
      if (r ? *r != a->fifo.received() : !out_of_memory(r)) out.unexpected = true;
    });
    h->released.store(true, std::memory_order_release);
  }
  if ((parts & asks_inside) != 0) {
    ask_b.emplace();
    ask_b->to = b;
    attempt(asks_inside, [&] { *a | *ask_b; });
    system->await_quiescence();
    if (a->asked && *a->asked != b->fifo.received()) out.unexpected = true;
  }

  tx::actor_ref c;
  if ((parts & transactional) != 0) {
    // A transactional actor that becomes on every increment.
    while (!c) attempt(transactional, [&] { c = tx::spawn(*system, counter(0)); });
    for (int i = 0; i < 5; ++i) attempt(transactional, [&] { tx::send(c, increment{}); });
    system->await_quiescence();
    attempt(transactional, [&] {
      const auto n = tx::ask<int>(*system, c, patient, get{});
      if (!n) {
        if (!out_of_memory(n)) out.unexpected = true;  // else a rollback, reported
        return;
      }
      // Every committed increment became once; a rolled back one left nothing.
      if (static_cast<std::uint64_t>(*n) != system->stats().total.tx_becomes)
        out.counter_consistent = false;
    });
  }

  if ((parts & timers) != 0) {
    bool armed = false;
    timed.emplace();
    attempt(timers, [&] {
      tact::send_after(0ms, *a, *timed);
      armed = true;
    });
    if (armed && !eventually([&] { return a->ticks.load(std::memory_order_acquire) == 1; }))
      out.unexpected = true;
    never.emplace();
    attempt(timers, [&] {
      tact::timer t = tact::send_after(1h, *a, *never);
      if (!t.cancel()) out.unexpected = true;
    });
  }
  system->await_quiescence();

  // What arrived is what was sent, once each and in order.
  out.fifo_clean = a->fifo.clean() && b->fifo.clean();
  out.sends_arrived = a->fifo.next(0) == sent_to_a && b->fifo.next(1) == a->fanned &&
                      a->fifo.next(2) == a->fanned_to_self;
  out.conserved = static_cast<bool>(tact::test::conservation_of(*system));

  // The end: the pills must go, so a failed one is sent again.
  const auto delete_surely = [&](auto& actor) {
    for (bool sent = false; !sent;) attempt(sends, [&] {
        actor | tact::delete_msg;
        sent = true;
      });
  };
  delete_surely(*a);
  delete_surely(*b);
  delete_surely(*h);
  c.reset();
  attempt(lifecycle, [&] { system->stop(); });
  system->stop();  // if the counted one failed
  out.conserved = out.conserved && static_cast<bool>(tact::test::conservation_of(*system));
  out.rollbacks = system->stats().total.tx_rollbacks;
  return done();
}

// Fails each allocation of `parts` in turn and checks every run.
void every_allocation_failing(unsigned parts) {
  // A run with nothing failing counts the allocations, after one that
  // leaves this thread as every later run finds it: with the chunks its
  // blocks are cut from (see block_pool.hpp), which the first run of a
  // part allocates and later runs only cut from.
  (void)run_scenario(parts, 0);
  counted = 0;
  const outcome clean = run_scenario(parts, 0);
  const auto allocations = static_cast<std::int64_t>(counted.load());
  REQUIRE(clean.started);
  REQUIRE(clean.failed_step == -1);
  REQUIRE_FALSE(clean.unexpected);
  REQUIRE(clean.behaviour_failures == 0);
  REQUIRE(clean.other_diagnostics == 0);
  REQUIRE(allocations > 0);

  std::uint64_t thrown = 0;
  std::uint64_t reported = 0;
  std::uint64_t unreached = 0;
  for (std::int64_t k = 1; k <= allocations; ++k) {
    INFO("allocation " << k << " of " << allocations << " fails");
    const outcome o = run_scenario(parts, k);
    CHECK(live_actors.load() == 0);
    CHECK(live_messages.load() == 0);
    CHECK(live_behaviours.load() == 0);
    // A run may allocate a little less than the counting run did (where an
    // ask's answer runs, which thread's block cache serves a message), so
    // the last few failures may find nothing to fail: a few, not most.
    if (!o.reached) {
      ++unreached;
      continue;
    }
    CHECK_FALSE(o.unexpected);
    CHECK(o.other_diagnostics == 0);
    // The failure surfaced once: thrown to a caller, or reported from a
    // behaviour (a handler's rolled back, and reported).
    CHECK((o.failed_step >= 0 ? 1u : 0u) + o.behaviour_failures == 1);
    CHECK(o.rollbacks <= o.behaviour_failures);
    thrown += o.failed_step >= 0 ? 1 : 0;
    reported += o.behaviour_failures;
    if (!o.started) continue;
    CHECK(o.conserved);
    CHECK(o.fifo_clean);
    CHECK(o.sends_arrived);
    CHECK(o.counter_consistent);
  }
  CHECK(unreached <= static_cast<std::uint64_t>(allocations) / 4 + 1);
  // The figures, for the soak's summary.
  std::cout << "allocation failures (parts " << parts << "): " << allocations << " runs, "
            << thrown << " thrown to the caller, " << reported << " reported from behaviours, "
            << unreached << " not reached\n";
}

}  // namespace

TEST_CASE("every allocation of a system's start and stop may fail, cleanly") {
  every_allocation_failing(lifecycle);
}

TEST_CASE("every allocation of spawns and sends may fail: the send throws, nothing is lost") {
  every_allocation_failing(sends);
}

TEST_CASE("every allocation of an ask from a behaviour may fail: the behaviour's error") {
  every_allocation_failing(asks_inside);
}

TEST_CASE("every allocation of an ask from outside may fail: the ask throws") {
  every_allocation_failing(asks_outside);
}

TEST_CASE("every allocation of transactional spawns, sends, becomes and asks may fail") {
  every_allocation_failing(transactional);
}

TEST_CASE("every allocation of starting and cancelling timers may fail") {
  every_allocation_failing(timers);
}
