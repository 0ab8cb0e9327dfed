#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/test_support.hpp"

// ask from threads outside the actor world, to classic and transactional
// actors: replies, timeouts and late replies, exceptions, requests left
// unanswered, many askers at once, and the asker helping run queued work.
// Deadlines here are generous and never what a test waits for when things
// work: a reply that should come comes long before.
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;

constexpr auto patient = 60s;

struct square : tact::request<long> {
  explicit square(long v) : value{v} {}
  long value;
};
// A square sent plainly rather than asked: freed after delivery.
square& heap_square(long v) {
  auto* m = new square{v};
  m->set_allocation(tact::allocation::Delete);
  return *m;
}

struct boom : tact::request<int> {};
struct ignore : tact::request<int> {};

struct calculator : tact::actor {
  explicit calculator(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(square& m) {
    m.reply(m.value * m.value);
    return Nodelete;
  }
  tact::allocation receive(boom&) { throw std::runtime_error{"boom"}; }
  tact::allocation receive(ignore&) { return Nodelete; }
};

// Blocks in receive until released: holds its worker.
struct blocker : tact::actor {
  explicit blocker(tact::actor_system& system) : tact::actor{system} {}
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  // Sends itself the message it blocks on; returns once it holds its worker.
  void hold() {
    *this | heap_square(0);
    while (!entered.load()) std::this_thread::yield();
  }
  tact::allocation receive(square& m) {
    entered.store(true);
    while (!release.load()) std::this_thread::sleep_for(100us);
    m.reply(m.value);
    return Nodelete;
  }
};

struct get {};
struct fail {};
struct drop {};

tx::behaviour counter(int n) {
  return {[n](const tx::actor_ref& customer, get) { tx::send(customer, n); },
          [](const tx::actor_ref&, fail) { throw std::logic_error{"refused"}; },
          [](const tx::actor_ref&, drop) {}};
}

// Classic actors on the test's stack must finish before they go.
template <class... A>
void finish(tact::actor_system& system, A&... actors) {
  ((actors | tact::finished_msg), ...);
  system.await_quiescence();
}

}  // namespace

TEST_CASE("ask returns a classic actor's reply") {
  tact::actor_system system{{.workers = 2}};
  calculator c{system};
  auto r = tact::ask(c, square{7}, patient);
  REQUIRE(r.has_value());
  CHECK(*r == 49);
  finish(system, c);
}

TEST_CASE("a classic behaviour that throws answers its asker with the exception") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  calculator c{system};
  auto r = tact::ask(c, boom{}, patient);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == tact::ask_error::failed);
  CHECK_THROWS_WITH(r.value(), "boom");
  auto unanswered = tact::ask(c, ignore{}, patient);
  CHECK(unanswered.error() == tact::ask_error::no_reply);
  CHECK_THROWS_AS(unanswered.value(), tact::ask_failed);
  finish(system, c);
  system.stop();
  CHECK(log.count(tact::diagnostic_kind::behaviour_exception) == 1);
}

TEST_CASE("a timed-out ask returns a timeout; the late reply is dropped safely") {
  tact::actor_system system{{.workers = 1}};
  blocker b{system};
  // The worker is held inside b's first message, so b's queue is being
  // processed: the asker cannot run the second one (a helping asker runs
  // only queues nobody else is processing) and has to wait for it.
  b | heap_square(0);
  while (!b.entered.load()) std::this_thread::yield();
  auto late = tact::ask(b, square{3}, 20ms);
  CHECK(late.error() == tact::ask_error::timeout);
  CHECK_THROWS_AS(late.value(), tact::ask_failed);
  b.release.store(true);  // the reply now goes to an abandoned slot
  system.await_quiescence();
  auto next = tact::ask(b, square{4}, patient);
  CHECK(next.value() == 4);
  finish(system, b);
}

// Keeps each request until a timer tells it to answer.
struct slow_calculator : tact::actor {
  explicit slow_calculator(tact::actor_system& system) : tact::actor{system} {}
  struct wake : tact::message {};
  std::vector<square*> waiting;
  wake tick;
  tact::allocation receive(square& m) {
    m.set_allocation(tact::allocation::Nodelete);  // kept until answered
    waiting.push_back(&m);
    tact::send_after(20ms, *this, tick);
    return Nodelete;
  }
  tact::allocation receive(wake&) {
    square* m = waiting.front();
    waiting.erase(waiting.begin());
    m->reply(m->value * m->value);
    delete m;
    return Nodelete;
  }
};

// nanoseconds::max() means no deadline: `now + timeout` once overflowed
// into the past, and such an ask timed out at once.
TEST_CASE("an ask with no deadline waits for a late answer, classic or transactional") {
  tact::actor_system system{{.workers = 2}};
  slow_calculator slow{system};
  const auto forever = std::chrono::nanoseconds::max();
  auto answered = tact::ask(slow, square{7}, forever);
  REQUIRE(answered);
  CHECK(*answered == 49);

  struct later {
    tx::actor_ref customer;
  };
  const tx::actor_ref late = tx::spawn(system, {[](const tx::actor_ref& customer, get) {
                                                  tx::send_after(20ms, tx::self(), later{customer});
                                                },
                                                [](const later& l) { tx::send(l.customer, 5); }});
  auto tx_answered = tx::ask<int>(system, late, forever, get{});
  REQUIRE(tx_answered);
  CHECK(*tx_answered == 5);
  finish(system, slow);
}

TEST_CASE("the asking thread runs queued work while its worker is held") {
  // One worker, held by a blocking receive; the asked actor sits on
  // another queue. Only the asking thread can run it.
  tact::actor_system system{{.workers = 1, .queues = 4}};
  blocker held{system};
  calculator c{system};
  held.hold();
  // The worker stays held until after the ask: a reply means the asker
  // ran c itself (without helping the ask would time out).
  auto r = tact::ask(c, square{5}, patient);
  CHECK(r.value() == 25);
  held.release.store(true);
  finish(system, held, c);
}

namespace {

// Each message busy for `work`, noting where and when it started.
struct slow_item : tact::message {
  slow_item() : tact::message{tact::allocation::Nodelete} {}
  std::uint32_t sequence = 0;
};

struct slow_worker : tact::actor {
  explicit slow_worker(tact::actor_system& system) : tact::actor{system} {}
  struct start {
    std::thread::id thread;
    std::chrono::steady_clock::time_point at;
  };
  std::chrono::microseconds work{500};
  std::vector<start> starts;
  std::uint32_t out_of_order = 0;
  tact::allocation receive(slow_item& m) {
    const auto now = std::chrono::steady_clock::now();
    if (m.sequence != starts.size()) ++out_of_order;
    starts.push_back({std::this_thread::get_id(), now});
    while (std::chrono::steady_clock::now() - now < work) {
    }
    return Nodelete;
  }
};

}  // namespace

namespace {

// What a helping asker did with a backlog while its ask ran out of time.
struct helping {
  std::size_t helped = 0;       // backlog messages the asker ran
  std::size_t helped_late = 0;  // ... started after its deadline
  std::uint64_t given_back = 0;
};

// The one worker is held, so the asking thread is the only runner; the
// asked actor is the one holding it, so it cannot answer in time, and
// another queue holds a backlog of 200 ms, ten times the ask's timeout.
// The asker helps with the backlog, and must give the rest of the batch
// back once its deadline has passed (it once ran the whole batch first:
// an ask of 20 ms returned after the backlog). Counted, not timed.
helping ask_beside_a_backlog() {
  tact::actor_system system{{.workers = 1, .queues = 4}};
  blocker held{system};
  slow_worker backlog{system};
  held.hold();
  std::vector<slow_item> items(400);
  for (std::uint32_t i = 0; i < items.size(); ++i) {
    items[i].sequence = i;
    backlog | items[i];
  }
  const auto timeout = 20ms;
  const auto asked = std::chrono::steady_clock::now();
  const auto r = tact::ask(held, square{1}, timeout);
  CHECK(r.error() == tact::ask_error::timeout);
  const auto deadline = asked + timeout;
  helping h;
  for (const slow_worker::start& s : backlog.starts)
    if (s.thread == std::this_thread::get_id()) {
      ++h.helped;
      if (s.at > deadline) ++h.helped_late;
    }
  h.given_back = system.stats().total.batches_given_back;
  // What it gave back runs later, once each and in order.
  held.release.store(true);
  finish(system, held, backlog);
  CHECK(backlog.starts.size() == items.size());
  CHECK(backlog.out_of_order == 0);
  return h;
}

}  // namespace

TEST_CASE("a helping asker stops between two messages once its deadline has passed") {
  // A thread descheduled past the whole timeout before it helps proves
  // nothing: run again, a bounded number of times, until the asker helped.
  helping h;
  for (int run = 0; run < 10 && h.helped == 0; ++run) h = ask_beside_a_backlog();
  INFO(h.helped << " backlog messages run by the asker, " << h.helped_late
                << " started after its deadline");
  REQUIRE(h.helped > 0);
  CHECK(h.helped < 400);
  // The deadline is read between messages: one started just before it may
  // start after it, none later.
  CHECK(h.helped_late <= 1);
  CHECK(h.given_back >= 1);
}

TEST_CASE("batches given back by askers still arrive once each and in order") {
  // Askers whose answers come from other workers, or whose short
  // deadlines pass, cut their batches short and give the rest back, while
  // workers and other askers gulp the same queues: no message may be lost,
  // repeated or reordered.
  const std::uint32_t workers = GENERATE(2u, 8u);
  INFO(workers << " workers");
  tact::actor_system system{tact::test::configured({.workers = workers, .queues = 2 * workers})};
  std::vector<std::unique_ptr<slow_worker>> sinks;
  for (int i = 0; i < 4; ++i) {
    sinks.push_back(std::make_unique<slow_worker>(system));
    sinks.back()->work = std::chrono::microseconds{20};
  }
  calculator c{system};
  const std::uint32_t per_sink = tact::test::scaled(2'000);
  std::vector<std::vector<slow_item>> items(sinks.size());
  std::atomic<bool> sent{false};
  std::vector<std::thread> askers;
  std::atomic<std::uint32_t> answered{0};
  for (int a = 0; a < 4; ++a)
    askers.emplace_back([&, a] {
      while (!sent.load()) std::this_thread::yield();
      for (int i = 0; i < 50; ++i) {
        auto r = tact::ask(c, square{a}, a % 2 == 0 ? patient : std::chrono::milliseconds{1});
        if (r) answered.fetch_add(1);
      }
    });
  for (std::size_t k = 0; k < sinks.size(); ++k) {
    items[k].resize(per_sink);
    for (std::uint32_t i = 0; i < per_sink; ++i) {
      items[k][i].sequence = i;
      *sinks[k] | items[k][i];
    }
  }
  sent.store(true);
  for (std::thread& t : askers) t.join();
  system.await_quiescence();
  CHECK(answered.load() > 0);
  INFO(system.stats().total.batches_given_back << " batches given back");
  for (const auto& sink : sinks) {
    CHECK(sink->starts.size() == per_sink);
    CHECK(sink->out_of_order == 0);
    *sink | tact::finished_msg;
  }
  c | tact::finished_msg;
  system.stop();
}

TEST_CASE("ask from a transactional handler is refused") {
  tact::actor_system system{{.workers = 1}};
  std::atomic<int> refused{0};
  const tx::actor_ref c = tx::spawn(system, counter(1));
  const tx::actor_ref probe = tx::spawn(system, {[&](int) {
                                          try {
                                            (void)tx::ask<int>(system, c, patient, get{});
                                          } catch (const std::logic_error&) {
                                            refused.store(1);
                                          }
                                        }});
  tx::send(probe, 0);
  system.await_quiescence();
  CHECK(refused.load() == 1);
}

TEST_CASE("a transactional handler that asks throws logic_error and rolls back") {
  // Decided in docs/ask.md: a handler's effects are staged until it
  // returns, so it cannot wait for an answer. Uncaught, the refusal rolls
  // the handler back like any exception: the staged send and become are
  // discarded.
  std::atomic<int> rollbacks{0};
  std::atomic<bool> logic_error_seen{false};
  std::atomic<int> delivered{0};
  tact::actor_system system{{.workers = 2, .on_rollback = [&](const tx::rollback& r) {
                               try {
                                 std::rethrow_exception(r.error);
                               } catch (const std::logic_error&) {
                                 logic_error_seen.store(true);
                               } catch (...) {
                               }
                               rollbacks.fetch_add(1);
                             }}};
  const tx::actor_ref c = tx::spawn(system, counter(1));
  const tx::actor_ref sink = tx::spawn(system, {[&](int) { delivered.fetch_add(1); }});
  const tx::actor_ref asker = tx::spawn(system, {[&](int) {
                                          tx::send(sink, 1);
                                          tx::become({[](int) {}});
                                          (void)tx::ask<int>(system, c, patient, get{});
                                        }});
  tx::send(asker, 0);
  system.await_quiescence();
  CHECK(rollbacks.load() == 1);
  CHECK(logic_error_seen.load());
  CHECK(delivered.load() == 0);
  // The become was discarded too: the old handler runs (and rolls back) again.
  tx::send(asker, 0);
  system.await_quiescence();
  CHECK(rollbacks.load() == 2);
  CHECK(delivered.load() == 0);
}

TEST_CASE("ask returns a transactional actor's reply, its exception, or no reply") {
  tact::actor_system system{{.workers = 2, .on_rollback = [](const tx::rollback&) {}}};
  const tx::actor_ref c = tx::spawn(system, counter(42));
  CHECK(tx::ask<int>(system, c, patient, get{}).value() == 42);
  auto failed = tx::ask<int>(system, c, patient, fail{});
  CHECK(failed.error() == tact::ask_error::failed);
  CHECK_THROWS_AS(failed.value(), std::logic_error);
  CHECK(tx::ask<int>(system, c, patient, drop{}).error() == tact::ask_error::no_reply);
  // A reply of the wrong type does not match the customer: no reply.
  const tx::actor_ref wrong =
      tx::spawn(system, {[](const tx::actor_ref& customer, get) { tx::send(customer, 1.5); }});
  CHECK(tx::ask<int>(system, wrong, patient, get{}).error() == tact::ask_error::no_reply);
}

TEST_CASE("many threads ask at once, each getting its own answers") {
  const int threads = 8;
  const int asks = static_cast<int>(tact::test::scaled(10'000));
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system system{{.workers = workers}};
  calculator c{system};
  const tx::actor_ref t =
      tx::spawn(system, {[](const tx::actor_ref& customer, long v) { tx::send(customer, v + 1); }});
  std::atomic<int> wrong{0};
  std::vector<std::thread> askers;
  for (int k = 0; k < threads; ++k)
    askers.emplace_back([&, k] {
      for (int i = 0; i < asks; ++i) {
        const long v = k * 1'000'000L + i;
        if (i % 2 == 0) {
          auto r = tact::ask(c, square{v}, patient);
          if (!r || *r != v * v) wrong.fetch_add(1);
        } else {
          auto r = tx::ask<long>(system, t, patient, v);
          if (!r || *r != v + 1) wrong.fetch_add(1);
        }
      }
    });
  for (std::thread& a : askers) a.join();
  CHECK(wrong.load() == 0);
  finish(system, c);
}

namespace {

struct parked_question : tact::request<int> {};

// Keeps the request it is asked (to answer some day) and finishes, so
// stop() has nothing to wait for while the asker still waits.
struct hoarder : tact::actor {
  explicit hoarder(tact::actor_system& system) : tact::actor{system} {}
  std::atomic<parked_question*> kept{nullptr};
  tact::allocation receive(parked_question& q) {
    q.set_allocation(tact::allocation::Nodelete);  // ours now
    kept.store(&q);
    return Finished;
  }
};

}  // namespace

// On the previous commit the asker slept until its deadline (a timeout a
// minute later) although nothing could answer once the system stopped.
TEST_CASE("stop() ends an ask waited on from outside the pool with no_reply") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::test::diagnostics_log log;  // the late ask's send to a finished actor
  tact::actor_system system{{.workers = workers, .on_diagnostic = log.handler()}};
  hoarder h{system};
  std::atomic<bool> returned{false};
  tact::ask_result<int> got{tact::ask_error::timeout};
  std::thread asker{[&] {
    got = tact::ask(h, parked_question{}, patient);
    returned.store(true);
  }};
  while (h.kept.load() == nullptr) std::this_thread::yield();
  system.stop();
  asker.join();
  CHECK(returned.load());
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error() == tact::ask_error::no_reply);
  delete h.kept.load();  // answering unanswered now reaches nobody
  // An ask after stop() ends at once too.
  CHECK(tact::ask(h, parked_question{}, patient).error() == tact::ask_error::no_reply);
}
