#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include <tact/tact.hpp>

#include "support/test_support.hpp"

namespace {

struct value_msg : tact::message {
  int value = 0;
};

struct odd_hater : tact::actor {
  std::vector<int> accepted;
  tact::allocation receive(value_msg& m) {
    if (m.value % 2 != 0) throw std::runtime_error{"odd value"};
    accepted.push_back(m.value);
    return Nodelete;
  }
};

struct tracked : value_msg {
  explicit tracked(int v, std::atomic<int>& destroyed) : destroyed{&destroyed} { value = v; }
  ~tracked() override { destroyed->fetch_add(1); }
  std::atomic<int>* destroyed;
};

}  // namespace

TEST_CASE("a behaviour that throws is reported with both types, and the actor carries on") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::test::diagnostics_log log;
  std::atomic<int> destroyed{0};
  tact::actor_system system{{.workers = workers, .on_diagnostic = log.handler()}};
  odd_hater actor;
  for (int v = 0; v < 10; ++v) {
    auto* m = new tracked{v, destroyed};
    m->set_allocation(tact::allocation::Delete);
    actor | *m;
  }
  system.await_quiescence();

  CHECK(actor.accepted == std::vector<int>{0, 2, 4, 6, 8});
  CHECK(destroyed == 10);  // dropped messages still get their allocation action
  const auto reports = log.of(tact::diagnostic_kind::behaviour_exception);
  REQUIRE(reports.size() == 5);
  for (const tact::diagnostic& d : reports) {
    CHECK_THAT(d.text, Catch::Matchers::Contains("odd_hater") &&
                           Catch::Matchers::Contains("tracked") &&
                           Catch::Matchers::Contains("odd value"));
    CHECK_THROWS_AS(std::rethrow_exception(d.exception), std::runtime_error);
  }
  actor | tact::finished_msg;
  system.stop();
}

TEST_CASE("the reaction to a behaviour's exception is the configured handler's") {
  std::atomic<int> reactions{0};
  tact::actor_system system{{.workers = 2, .on_diagnostic = [&](const tact::diagnostic& d) {
                               if (d.kind == tact::diagnostic_kind::behaviour_exception)
                                 reactions.fetch_add(1);
                             }}};
  odd_hater actor;
  value_msg one;
  one.value = 1;
  value_msg two;
  two.value = 2;
  actor | one | two | one;
  system.await_quiescence();
  CHECK(reactions == 2);
  CHECK(actor.accepted == std::vector<int>{2});
  actor | tact::finished_msg;
  system.stop();
}
