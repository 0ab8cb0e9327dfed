#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/test_support.hpp"
#include "transactional/savepoint.hpp"
#include "transactional/tx_support.hpp"

namespace {

using tact::test::record;
using tact::test::recorder;
namespace tx = tact::tx;

struct poke {};

// Counts, through a shared_ptr's deleter, how many behaviours that
// captured a copy of it are gone.
std::shared_ptr<void> lifetime_token(std::atomic<int>& gone) {
  return {nullptr, [&gone](void*) { gone.fetch_add(1); }};
}

// "armed" sends three messages, creates an actor (which would report to
// `out` when poked), pokes it, becomes "disarmed", and throws on odd
// numbers: after the throw nothing of it may be visible.
tx::behaviour disarmed(tx::actor_ref out) {
  return {[out](int n) { tx::send(out, "disarmed " + std::to_string(n)); }};
}

tx::behaviour armed(tx::actor_ref out, std::atomic<int>& created_gone) {
  return {[out, &created_gone](int n) {
    for (int i = 0; i < 3; ++i) tx::send(out, "armed " + std::to_string(n) + "." + std::to_string(i));
    const tx::actor_ref child =
        tx::create({[out, token = lifetime_token(created_gone)](poke) {
          tx::send(out, std::string{"child"});
        }});
    tx::send(child, poke{});
    tx::become(disarmed(out));
    if (n % 2 != 0) throw std::runtime_error{"odd"};
  }};
}

struct rollback_seen {
  tx::actor_ref actor;
  int value = 0;
  std::string types;
  std::string error;
};

}  // namespace

TEST_CASE("a handler that throws leaves no trace: no sends, no become, no created actor") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  std::mutex mutex;
  std::vector<rollback_seen> rollbacks;
  std::atomic<int> created_gone{0};
  record<std::string> seen;
  {
    tact::actor_system system{{.workers = workers, .on_rollback = [&](const tx::rollback& r) {
                                 std::string error;
                                 try {
                                   std::rethrow_exception(r.error);
                                 } catch (const std::exception& e) {
                                   error = e.what();
                                 }
                                 std::lock_guard guard{mutex};
                                 rollbacks.push_back({r.actor, std::get<0>(*r.msg.as<int>()),
                                                      r.msg.describe(), error});
                               }}};
    const tx::actor_ref out = tx::spawn(system, recorder(seen));
    const tx::actor_ref a = tx::spawn(system, armed(out, created_gone), tx::mode::serialized);

    tx::send(a, 1);
    system.await_quiescence();
    CHECK(seen.values().empty());
    // The child created by the rolled-back handler is already reclaimed.
    CHECK(created_gone.load() == 1);
    REQUIRE(rollbacks.size() == 1);
    CHECK(rollbacks[0].actor == a);
    CHECK(rollbacks[0].value == 1);
    CHECK(rollbacks[0].types == "(int)");
    CHECK(rollbacks[0].error == "odd");

    // The next message still meets "armed", and this time it commits.
    tx::send(a, 2);
    system.await_quiescence();
    tx::send(a, 3);
    system.await_quiescence();
    std::vector<std::string> values = seen.values();
    std::sort(values.begin(), values.end());
    CHECK(values == std::vector<std::string>{"armed 2.0", "armed 2.1", "armed 2.2", "child",
                                             "disarmed 3"});
    const tact::worker_stats total = system.stats().total;
    CHECK(total.tx_rollbacks == 1);
    CHECK(total.tx_becomes == 1);
  }
  // With the system and every reference gone, the committed child is too.
  CHECK(created_gone.load() == 2);
}

TEST_CASE("by default a rollback reaches on_diagnostic as a behaviour exception") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  const tx::actor_ref a = tx::spawn(system, {[](int) { throw std::runtime_error{"boom"}; }});
  tx::send(a, 5);
  system.await_quiescence();
  const auto reports = log.of(tact::diagnostic_kind::behaviour_exception);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].text.find("(int)") != std::string::npos);
  CHECK(reports[0].text.find("boom") != std::string::npos);
  CHECK(reports[0].exception != nullptr);
}

TEST_CASE("on_commit actions run only when the handler commits") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 2, .on_diagnostic = log.handler()}};
  std::atomic<int> ran{0};
  const tx::actor_ref a = tx::spawn(system, {[&ran](int n) {
                                      tx::on_commit([&ran] { ran.fetch_add(1); });
                                      if (n < 0) throw std::runtime_error{"negative"};
                                    }});
  tx::send(a, 1);
  tx::send(a, -1);
  tx::send(a, 2);
  system.await_quiescence();
  CHECK(ran.load() == 2);
  CHECK(log.count(tact::diagnostic_kind::behaviour_exception) == 1);  // the rollback
  CHECK_THROWS_AS(tx::on_commit([] {}), std::logic_error);
}

namespace {

// Names the behaviour an actor has: answers "<name> <n>" to `out`.
tx::behaviour named(tx::actor_ref out, std::string name) {
  return {[out, name](int n) { tx::send(out, name + " " + std::to_string(n)); }};
}

// Stages a send and a become around a savepoint: on 1 the savepoint
// stages a send, a send to itself, an action and a become, then throws;
// on 2 it stages a send and returns; on 3 it also stages a become.
tx::behaviour around_savepoint(tx::actor_ref out, std::atomic<int>& actions) {
  return {[out, &actions](int n) {
    tx::send(out, "before " + std::to_string(n));
    tx::become(named(out, "outer"));
    try {
      tact::detail::tx::run_in_savepoint([&] {
        tx::send(out, "inside " + std::to_string(n));
        if (n == 3) tx::become(named(out, "inner"));
        if (n != 1) return;
        tx::send(tx::self(), 0);
        tx::on_commit([&actions] { actions.fetch_add(1); });
        tx::become(named(out, "taken back"));
        throw std::runtime_error{"undo"};
      });
    } catch (const std::runtime_error&) {
    }
    tx::send(out, "after " + std::to_string(n));
  }};
}

}  // namespace

TEST_CASE("a savepoint takes back what was staged in it if it throws, and keeps it if not") {
  const tx::mode mode = GENERATE(tx::mode::parallel, tx::mode::serialized);
  const int n = GENERATE(1, 2, 3);
  record<std::string> seen;
  std::atomic<int> actions{0};
  tact::actor_system system{{.workers = 2}};
  const tx::actor_ref out = tx::spawn(system, recorder(seen));
  const tx::actor_ref a = tx::spawn(system, around_savepoint(out, actions), mode);
  tx::send(a, n);
  system.await_quiescence();
  tx::send(a, 9);  // meets the become that committed
  system.await_quiescence();
  std::vector<std::string> values = seen.values();
  std::sort(values.begin(), values.end());
  const std::string i = std::to_string(n);
  std::vector<std::string> expected{"after " + i, "before " + i,
                                    n == 3 ? "inner 9" : "outer 9"};
  if (n != 1) expected.push_back("inside " + i);
  std::sort(expected.begin(), expected.end());
  CHECK(values == expected);
  CHECK(actions.load() == 0);
  CHECK(system.stats().total.tx_rollbacks == 0);
  CHECK_THROWS_AS(tact::detail::tx::run_in_savepoint([] {}), std::logic_error);
}
