#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

#include "support/test_support.hpp"

// The widgets, each alone: what reaches the customer (the reply, a
// tx::failure, timed_out), that one-shot actors stay one-shot under
// parallel delivery, that the serializer admits one request at a time in
// arrival order and survives services that throw or never answer, and
// that fork/join keeps the order of its services whatever order replies
// come in. Tests wait for events (an ask's reply, a count of messages
// logged, quiescence); where a negative must be shown (a timer that never
// started), a later sentinel timer stands for "long enough".
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace widgets = tact::widgets;

constexpr auto patient = 60s;

// What reached a customer, in order, from any worker; the test thread
// waits for a count of entries, then reads them.
class inbox {
 public:
  // Notifies under the lock, so that once a waiter has seen its count the
  // inbox is no longer touched by this call and may be destroyed.
  void add(std::string entry) {
    std::lock_guard guard{mutex_};
    entries_.push_back(std::move(entry));
    changed_.notify_all();
  }
  // The entries once there are `count`, or whatever came if they do not
  // (after a minute: a deadlock guard, so that the check fails instead of
  // the test hanging).
  std::vector<std::string> await(std::size_t count) {
    std::unique_lock guard{mutex_};
    changed_.wait_for(guard, patient, [&] { return entries_.size() >= count; });
    return entries_;
  }
  std::vector<std::string> entries() {
    std::lock_guard guard{mutex_};
    return entries_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> entries_;
};

// A customer that logs every outcome a widget can pass on. Serialized, so
// that it logs in the order messages were posted to it.
tx::actor_ref logger(tact::actor_system& system, inbox& into) {
  return tx::spawn(system,
                   {[&into](int v) { into.add("reply " + std::to_string(v)); },
                    [&into](widgets::timed_out) { into.add("timed out"); },
                    [&into](const tx::failure&) { into.add("failure"); },
                    [&into](const std::string& note) { into.add(note); }},
                   tx::mode::serialized);
}

struct release {};
struct forget {};

// Services, customer first.
tx::behaviour echo() {
  return {[](const tx::actor_ref& customer, int v) { tx::send(customer, v); }};
}
tx::behaviour doubler() {
  return {[](const tx::actor_ref& customer, int v) { tx::send(customer, 2 * v); }};
}
tx::behaviour silent() {
  return {[](const tx::actor_ref&, int) {}};
}
tx::behaviour thrower() {
  return {[](const tx::actor_ref&, int) { throw std::runtime_error{"service failed"}; }};
}
// Keeps the customer until released, then answers it: a reply that comes
// as late as the test likes; or, told to forget, drops it unanswered.
tx::behaviour stash() {
  return {[](const tx::actor_ref& customer, int v) {
    tx::become({[customer, v](release) {
                  tx::send(customer, v);
                  tx::become(stash());
                },
                [](forget) { tx::become(stash()); }});
  }};
}

tact::system_config quiet(std::uint32_t workers) {
  return {.workers = workers, .on_rollback = [](const tx::rollback&) {}};
}

}  // namespace

TEST_CASE("forward passes a copy of any message on, with or without a new customer") {
  inbox log;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref twice = tx::spawn(system, doubler());
  // A catch-all proxy: the ask's customer gets the doubled value.
  const tx::actor_ref proxy =
      tx::spawn(system, {[twice](const tx::message& m) { tx::forward(twice, m); }});
  CHECK(tx::ask<int>(system, proxy, patient, 21).value() == 42);

  // With a new customer: the answer goes to the logger, and the asker's
  // customer, no longer named by anyone, ends unanswered.
  const tx::actor_ref to_log = logger(system, log);
  const tx::actor_ref diverter = tx::spawn(
      system, {[twice, to_log](const tx::message& m) { tx::forward(twice, m, to_log); }});
  CHECK(tx::ask<int>(system, diverter, patient, 5).error() == tact::ask_error::no_reply);
  CHECK(log.await(1) == std::vector<std::string>{"reply 10"});

  // Refused: a new customer for a message without one, elements that
  // cannot be copied.
  std::atomic<int> refused{0};
  const tx::actor_ref careful =
      tx::spawn(system, {[&](const tx::message& m) {
                  try {
                    tx::forward(twice, m, to_log);
                  } catch (const std::invalid_argument&) {
                    refused.fetch_add(1);
                  } catch (const std::logic_error&) {
                    refused.fetch_add(10);
                  }
                }});
  tx::send(careful, 5);                         // no customer to replace
  tx::send(careful, std::make_unique<int>(1));  // not copyable
  system.await_quiescence();
  CHECK(refused.load() == 11);
}

TEST_CASE("a request no handler matches answers a listening customer with a failure") {
  tact::actor_system system{quiet(1)};
  const tx::actor_ref twice = tx::spawn(system, doubler());
  auto r = tx::ask<int>(system, twice, patient, std::string{"not a number"});
  REQUIRE(r.error() == tact::ask_error::failed);
  CHECK_THROWS_AS(r.value(), std::logic_error);
  CHECK(system.stats().total.tx_unmatched == 1);
}

TEST_CASE("once passes the first message and drops the rest, even from many workers") {
  inbox log;
  tact::actor_system system{quiet(8)};
  const tx::actor_ref gate = widgets::once(logger(system, log));
  const int senders = 4;
  const int each = static_cast<int>(tact::test::scaled(2000));
  std::vector<std::thread> threads;
  for (int t = 0; t < senders; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < each; ++i) tx::send(gate, t * each + i);
    });
  for (auto& th : threads) th.join();
  system.await_quiescence();
  CHECK(log.entries().size() == 1);
  CHECK_THROWS_AS(widgets::once(tx::actor_ref{}), std::invalid_argument);
}

TEST_CASE("a timeout gate passes the reply, or timed_out, whichever comes first") {
  inbox log;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref customer = logger(system, log);

  SECTION("the reply wins over an hour-long timeout") {
    tx::send(tx::spawn(system, echo()), widgets::timeout(customer, 1h), 7);
    CHECK(log.await(1) == std::vector<std::string>{"reply 7"});
    system.await_quiescence();
    CHECK(log.entries().size() == 1);
  }
  SECTION("no reply: timed_out, and a reply after it is dropped") {
    const tx::actor_ref late = tx::spawn(system, stash());
    tx::send(late, widgets::timeout(customer, 1ms), 7);
    CHECK(log.await(1) == std::vector<std::string>{"timed out"});
    tx::send(late, release{});
    system.await_quiescence();
    CHECK(log.entries().size() == 1);
  }
  SECTION("a service that throws: its failure is the answer") {
    tx::send(tx::spawn(system, thrower()), widgets::timeout(customer, 1h), 7);
    CHECK(log.await(1) == std::vector<std::string>{"failure"});
  }
  SECTION("made inside a handler, the timer starts only if the handler commits") {
    const tx::actor_ref svc = tx::spawn(system, silent());
    const tx::actor_ref client =
        tx::spawn(system, {[svc, customer](int v) {
                    tx::send(svc, widgets::timeout(customer, 1ms), v);
                    if (v < 0) throw std::runtime_error{"roll back"};
                  }});
    tx::send(client, -1);
    tx::send(client, 1);
    CHECK(log.await(1) == std::vector<std::string>{"timed out"});
    // The rolled-back gate's timer never started: a sentinel due well
    // after both gates' timers comes second.
    tx::send_after(20ms, customer, std::string{"sentinel"});
    CHECK(log.await(2) == std::vector<std::string>{"timed out", "sentinel"});
  }
}

TEST_CASE("beta makes a one-shot continuation that carries its captures") {
  inbox log;
  inbox failures;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref twice = tx::spawn(system, doubler());
  // x + 2x, computed by a continuation that remembers x and the customer.
  const tx::actor_ref triple = tx::spawn(
      system, {[twice](const tx::actor_ref& customer, int x) {
        tx::send(twice, widgets::beta([customer, x](int doubled) { tx::send(customer, x + doubled); }),
                 x);
      }});
  CHECK(tx::ask<int>(system, triple, patient, 5).value() == 15);

  const tx::actor_ref once_only =
      widgets::beta(system, [&log](int v) { log.add("reply " + std::to_string(v)); },
                    [&log](const tx::failure&) { log.add("failure"); });
  tx::send(once_only, 1);
  system.await_quiescence();
  tx::send(once_only, 2);
  system.await_quiescence();
  CHECK(log.entries() == std::vector<std::string>{"reply 1"});

  // It hears that its request failed, or matched nothing.
  const auto listening = [&] {
    return widgets::beta(system, [&failures](int) { failures.add("reply"); },
                         [&failures](const tx::failure&) { failures.add("failure"); });
  };
  tx::send(tx::spawn(system, thrower()), listening(), 1);
  tx::send(twice, listening(), std::string{"unmatched"});
  CHECK(failures.await(2) == std::vector<std::string>{"failure", "failure"});

  CHECK_THROWS_AS(widgets::beta([](int) {}), std::logic_error);
}

TEST_CASE("unwind_protect runs its cleanup once, on reply, failure or timeout") {
  inbox log;
  std::atomic<int> cleanups{0};
  tact::actor_system system{quiet(2)};
  const tx::actor_ref customer = logger(system, log);
  const auto protect = [&](tx::behaviour service, auto delay) {
    return widgets::unwind_protect(tx::spawn(system, std::move(service)), delay,
                                   [&cleanups, customer] {
                                     cleanups.fetch_add(1);
                                     tx::send(customer, std::string{"cleanup"});
                                   });
  };

  SECTION("reply: cleanup, staged with the answer") {
    tx::send(protect(echo(), 1h), customer, 3);
    const auto got = log.await(2);
    CHECK((got == std::vector<std::string>{"reply 3", "cleanup"} ||
           got == std::vector<std::string>{"cleanup", "reply 3"}));
  }
  SECTION("failure") {
    tx::send(protect(thrower(), 1h), customer, 3);
    const auto got = log.await(2);
    CHECK((got == std::vector<std::string>{"failure", "cleanup"} ||
           got == std::vector<std::string>{"cleanup", "failure"}));
  }
  SECTION("timeout, and a late reply runs no second cleanup") {
    const tx::actor_ref late = tx::spawn(system, stash());
    const tx::actor_ref guarded =
        widgets::unwind_protect(late, 1ms, [&cleanups] { cleanups.fetch_add(1); });
    tx::send(guarded, customer, 3);
    CHECK(log.await(1) == std::vector<std::string>{"timed out"});
    tx::send(late, release{});
    system.await_quiescence();
    CHECK(log.entries().size() == 1);
  }
  SECTION("an ask through it gets the reply") {
    CHECK(tx::ask<int>(system, protect(doubler(), 1h), patient, 4).value() == 8);
    CHECK(log.await(1) == std::vector<std::string>{"cleanup"});
  }
  SECTION("a request without a customer is refused") {
    tx::send(protect(echo(), 1h), 3);
    system.await_quiescence();
    CHECK(system.stats().total.tx_rollbacks == 1);
    cleanups.fetch_add(1);  // the one the other sections count
  }
  system.await_quiescence();
  CHECK(cleanups.load() == 1);
}

namespace {

struct step {};

// A service that must not be entered twice: each request is a
// conversation of three messages with itself before the answer. A second
// request arriving mid-conversation is logged as an overlap.
tx::behaviour account(inbox& log);
tx::behaviour account_busy(inbox& log, tx::actor_ref customer, int id, int steps) {
  return {[&log, customer, id, steps](step) {
            if (steps > 0) {
              tx::send(tx::self(), step{});
              tx::become(account_busy(log, customer, id, steps - 1));
              return;
            }
            tx::send(customer, id);
            tx::become(account(log));
          },
          [&log](const tx::actor_ref&, int) { log.add("overlap"); }};
}
tx::behaviour account(inbox& log) {
  return {[&log](const tx::actor_ref& customer, int id) {
    if (id < 0) throw std::runtime_error{"refused"};
    log.add("start " + std::to_string(id));
    tx::send(tx::self(), step{});
    tx::become(account_busy(log, customer, id, 3));
  }};
}

}  // namespace

TEST_CASE("a serializer admits one request at a time, in arrival order") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  inbox service_log;
  inbox answers;
  tact::actor_system system{quiet(workers)};
  const tx::actor_ref guarded = widgets::serializer(tx::spawn(system, account(service_log)));
  const tx::actor_ref customer = logger(system, answers);
  const int n = static_cast<int>(tact::test::scaled(400));
  for (int i = 0; i < n; ++i) tx::send(guarded, customer, i);
  const auto replies = answers.await(static_cast<std::size_t>(n));
  system.await_quiescence();
  const auto starts = service_log.entries();
  REQUIRE(starts.size() == static_cast<std::size_t>(n));  // no overlap entries
  bool in_order = true;
  for (int i = 0; i < n; ++i) {
    in_order = in_order && starts[static_cast<std::size_t>(i)] == "start " + std::to_string(i) &&
               replies[static_cast<std::size_t>(i)] == "reply " + std::to_string(i);
  }
  CHECK(in_order);
}

TEST_CASE("a serializer serves many asking threads without overlap") {
  inbox service_log;
  tact::actor_system system{quiet(8)};
  const tx::actor_ref guarded = widgets::serializer(tx::spawn(system, account(service_log)));
  const int threads = 4;
  const int asks = static_cast<int>(tact::test::scaled(300));
  std::atomic<int> wrong{0};
  std::vector<std::thread> askers;
  for (int t = 0; t < threads; ++t)
    askers.emplace_back([&, t] {
      for (int i = 0; i < asks; ++i) {
        const int id = t * asks + i;
        auto r = tx::ask<int>(system, guarded, patient, id);
        if (!r || *r != id) wrong.fetch_add(1);
      }
    });
  for (auto& a : askers) a.join();
  system.await_quiescence();
  CHECK(wrong.load() == 0);
  CHECK(service_log.entries().size() == static_cast<std::size_t>(threads * asks));
}

TEST_CASE("a serializer moves on past a request that fails, matches nothing or times out") {
  inbox service_log;
  inbox answers;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref customer = logger(system, answers);

  SECTION("failure and unmatched requests are answered with failures") {
    const tx::actor_ref guarded = widgets::serializer(tx::spawn(system, account(service_log)));
    tx::send(guarded, customer, 1);
    tx::send(guarded, customer, -1);                      // throws
    tx::send(guarded, customer, std::string{"unknown"});  // matches nothing
    tx::send(guarded, 5);                                 // no customer: refused
    tx::send(guarded, customer, 2);
    CHECK(answers.await(4) ==
          std::vector<std::string>{"reply 1", "failure", "failure", "reply 2"});
    system.await_quiescence();
    CHECK(system.stats().total.tx_rollbacks == 2);  // the throw, and the refusal
  }
  SECTION("a service that never answers, guarded by unwind_protect") {
    const tx::actor_ref mute = tx::spawn(system, silent());
    const tx::actor_ref guarded = widgets::serializer(widgets::unwind_protect(mute, 1ms, [] {}));
    tx::send(guarded, customer, 1);
    tx::send(guarded, customer, 2);
    CHECK(answers.await(2) == std::vector<std::string>{"timed out", "timed out"});
  }
}

TEST_CASE("race passes the first answer on; failures lose unless all fail") {
  inbox log;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref quick = tx::spawn(system, echo());
  const tx::actor_ref never = tx::spawn(system, stash());
  const tx::actor_ref broken = tx::spawn(system, thrower());

  CHECK(tx::ask<int>(system, widgets::race({never, quick}), patient, 1).value() == 1);
  CHECK(tx::ask<int>(system, widgets::race({broken, quick, broken}), patient, 2).value() == 2);
  CHECK(tx::ask<int>(system, widgets::race({broken, broken}), patient, 3).error() ==
        tact::ask_error::failed);

  tx::send(widgets::race({quick, tx::spawn(system, echo()), quick}), logger(system, log), 4);
  system.await_quiescence();
  CHECK(log.entries() == std::vector<std::string>{"reply 4"});
  CHECK_THROWS_AS(widgets::race({}), std::invalid_argument);
}

TEST_CASE("fork_join answers with every reply, in the order of its services") {
  tact::actor_system system{quiet(2)};
  // Service i answers x * 10 + i after (4 - i) ms: replies come in
  // reverse order.
  std::vector<tx::actor_ref> services;
  for (int i = 0; i < 4; ++i)
    services.push_back(tx::spawn(system, {[i](const tx::actor_ref& customer, int x) {
                                   tx::send_after(std::chrono::milliseconds{4 - i}, customer,
                                                  x * 10 + i);
                                 }}));
  const tx::actor_ref all = widgets::fork_join<int>(services);
  CHECK(tx::ask<std::vector<int>>(system, all, patient, 7).value() ==
        std::vector<int>{70, 71, 72, 73});

  // One service fails: the customer gets one failure, not a vector.
  services.push_back(tx::spawn(system, thrower()));
  CHECK(tx::ask<std::vector<int>>(system, widgets::fork_join<int>(services), patient, 1).error() ==
        tact::ask_error::failed);

  // join: different requests, one vector.
  const tx::actor_ref twice = tx::spawn(system, doubler());
  const tx::actor_ref summer = tx::spawn(
      system, {[twice](const tx::actor_ref& customer, int n) {
                 const auto parts = widgets::join<int>(widgets::beta([customer](const std::vector<int>& v) {
                                                         int sum = 0;
                                                         for (int x : v) sum += x;
                                                         tx::send(customer, sum);
                                                       }),
                                                       static_cast<std::size_t>(n));
                 for (int i = 0; i < n; ++i) tx::send(twice, parts[static_cast<std::size_t>(i)], i);
               }});
  CHECK(tx::ask<int>(system, summer, patient, 10).value() == 90);
  CHECK_THROWS_AS(widgets::join<int>(twice, 0), std::invalid_argument);
}

TEST_CASE("messages holding move-only elements still travel; forwarding them is refused") {
  tact::actor_system system{quiet(2)};
  std::atomic<int> got{0};
  std::atomic<int> refused{0};
  const tx::actor_ref sink_of_jobs =
      tx::spawn(system, {[&](const std::vector<std::unique_ptr<int>>& jobs) {
                  got.fetch_add(static_cast<int>(jobs.size()));
                }});
  const tx::actor_ref relay = tx::spawn(system, {[&](const tx::message& m) {
                                          try {
                                            tx::forward(sink_of_jobs, m);
                                          } catch (const std::logic_error&) {
                                            refused.fetch_add(1);
                                          }
                                        }});
  std::vector<std::unique_ptr<int>> jobs;
  jobs.push_back(std::make_unique<int>(1));
  jobs.push_back(std::make_unique<int>(2));
  tx::send(sink_of_jobs, std::move(jobs));
  tx::send(relay, std::vector<std::unique_ptr<int>>{});
  system.await_quiescence();
  CHECK(got.load() == 2);
  CHECK(refused.load() == 1);
}

TEST_CASE("a side copy of a request that nobody handles does not fail it") {
  tact::actor_system system{quiet(2)};
  // The service answers, and also shows the request to an auditor that
  // takes none: the asker still gets its answer, not a failure.
  const tx::actor_ref auditor = tx::spawn(system, {[](long) {}});
  const tx::actor_ref service = tx::spawn(
      system, {[auditor](const tx::actor_ref& customer, int v) {
        tx::send(auditor, customer, v);
        tx::send(customer, v);
      }});
  for (int i = 0; i < 20; ++i) CHECK(tx::ask<int>(system, service, patient, i).value() == i);
  CHECK(tx::ask<int>(system, widgets::race({service, tx::spawn(system, thrower())}), patient, 5)
            .value() == 5);
}

TEST_CASE("a reply that cannot be passed on reaches the customer as a failure") {
  tact::actor_system system{quiet(2)};
  // Answers its first request with something that cannot be copied.
  const tx::actor_ref odd = tx::spawn(system, {[](const tx::actor_ref& customer, int v) {
                                        if (v == 0)
                                          tx::send(customer, std::make_unique<int>(v));
                                        else
                                          tx::send(customer, v);
                                      }});
  const tx::actor_ref guarded = widgets::serializer(odd);
  CHECK(tx::ask<int>(system, guarded, patient, 0).error() == tact::ask_error::failed);
  CHECK(tx::ask<int>(system, guarded, patient, 1).value() == 1);  // the lock was released
}

TEST_CASE("a long serializer queue is freed without deep recursion") {
  inbox answers;
  tact::actor_system system{quiet(2)};
  // A service held until released: every request queues behind the first.
  const tx::actor_ref held = tx::spawn(system, stash());
  const tx::actor_ref guarded = widgets::serializer(held);
  const tx::actor_ref customer = logger(system, answers);
  const int n = static_cast<int>(tact::test::scaled(400'000));
  for (int i = 0; i < n; ++i) tx::send(guarded, customer, i);
  system.await_quiescence();
  tx::send(held, release{});  // answers 0; the next request finds the stash waiting again
  CHECK(answers.await(1) == std::vector<std::string>{"reply 0"});
  system.await_quiescence();
  // The stash keeps request 1's customer, the serializer's gate, which
  // keeps the serializer, which keeps the stash: a cycle. Forgetting the
  // customer breaks it, so once `guarded` goes nothing names the
  // serializer, and its queue (n - 2 waiting requests, one list) is freed.
  tx::send(held, forget{});
  system.await_quiescence();
}

TEST_CASE("join turns an answer that is not a reply into a failure") {
  tact::actor_system system{quiet(2)};
  const tx::actor_ref mute = tx::spawn(system, silent());
  const tx::actor_ref quick = tx::spawn(system, echo());
  // One service times out behind unwind_protect: the join fails instead of
  // waiting for good.
  const tx::actor_ref all =
      widgets::fork_join<int>({quick, widgets::unwind_protect(mute, 1ms, [] {})});
  CHECK(tx::ask<std::vector<int>>(system, all, patient, 3).error() == tact::ask_error::failed);
}

TEST_CASE("an ask through a timeout gate that fires ends as a timeout") {
  tact::actor_system system{quiet(2)};
  const tx::actor_ref mute = tx::spawn(system, silent());

  SECTION("unwind_protect's gate") {
    const auto r = tx::ask<int>(system, widgets::unwind_protect(mute, 20ms, [] {}), patient, 1);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == tact::ask_error::timeout);
  }
  SECTION("a timeout gate a proxy puts in the asker's place") {
    const tx::actor_ref bounded = tx::spawn(system, {[mute](const tx::message& m) {
      tx::forward(mute, m, widgets::timeout(*m.customer(), 20ms));
    }});
    const auto r = tx::ask<int>(system, bounded, patient, 1);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == tact::ask_error::timeout);
  }
}

TEST_CASE("a cleanup that throws takes back what it staged; the customer gets its exception") {
  inbox side_effects;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref witness = logger(system, side_effects);
  std::atomic<int> actions{0};
  const tx::actor_ref guarded = widgets::unwind_protect(
      tx::spawn(system, echo()), 1h, [witness, &actions] {
        tx::send(tx::self(), std::string{"to the gate itself"});
        tx::send(witness, std::string{"released"});
        tx::on_commit([&actions] { actions.fetch_add(1); });
        throw std::runtime_error{"cleanup failed"};
      });
  const auto r = tx::ask<int>(system, guarded, patient, 3);
  REQUIRE(r.error() == tact::ask_error::failed);
  CHECK_THROWS_WITH(r.value(), "cleanup failed");
  system.await_quiescence();
  CHECK(side_effects.entries().empty());
  CHECK(actions.load() == 0);
}

TEST_CASE("a race whose services fail or stay silent answers only through a timeout") {
  inbox log;
  tact::actor_system system{quiet(2)};
  const tx::actor_ref customer = logger(system, log);
  const tx::actor_ref broken = tx::spawn(system, thrower());
  const tx::actor_ref mute = tx::spawn(system, silent());  // lets the request go
  const tx::actor_ref keeper = tx::spawn(system, stash());  // keeps it, never answers

  // A timeout on the customer bounds the wait, whichever way the other
  // service is silent.
  tx::send(widgets::race({broken, mute}), widgets::timeout(customer, 20ms), 1);
  tx::send(widgets::race({broken, keeper}), widgets::timeout(customer, 20ms), 2);
  CHECK(log.await(2) == std::vector<std::string>{"timed out", "timed out"});

  // A silent service that lets the request go lets the race's customer go
  // too: an ask knows at once that nothing can answer it, a plain customer
  // hears nothing.
  const auto r = tx::ask<int>(system, widgets::race({broken, mute}), patient, 3);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == tact::ask_error::no_reply);
  tx::send(widgets::race({broken, mute}), customer, 4);
  system.await_quiescence();
  CHECK(log.entries().size() == 2);
}
