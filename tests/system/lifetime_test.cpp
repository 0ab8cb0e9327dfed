// What a program may keep once its actor_system is stopped or destroyed,
// and what it may still do with it (docs/concepts.md, "Lifetimes"). Under
// AddressSanitizer, any use of the destroyed system here fails the test.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/test_support.hpp"

using namespace std::chrono_literals;
namespace tx = tact::tx;

namespace {

struct note : tact::message {
  note() = default;
  explicit note(int& freed) : tact::message{tact::allocation::Delete}, freed_{&freed} {}
  ~note() override {
    if (freed_ != nullptr) ++*freed_;
  }

 private:
  int* freed_ = nullptr;
};

struct question : tact::request<int> {};

struct worker : tact::actor {
  using tact::actor::actor;
  int received = 0;
  tact::allocation receive(note&) {
    ++received;
    return Nodelete;
  }
};

// Keeps every question it receives, unanswered, for the test to answer.
struct hoarder : tact::actor {
  using tact::actor::actor;
  std::atomic<question*> kept{nullptr};
  tact::allocation receive(question& q) {
    q.set_allocation(Nodelete);  // ours now, not the engine's
    kept.store(&q);
    return Nodelete;
  }
};

// A transactional behaviour that holds `token` while it exists.
tx::behaviour holding(std::shared_ptr<int> token) {
  return {[token](int) {}};
}

}  // namespace

TEST_CASE("a finished actor may be destroyed after its system") {
  std::unique_ptr<worker> a;
  {
    tact::actor_system system{{.workers = 1}};
    a = std::make_unique<worker>(system);
    note n;
    *a | n | tact::finished_msg;
    system.stop();
  }
  CHECK(a->finished());
  CHECK(a->received == 1);
  a.reset();
}

TEST_CASE("an actor_ref may be copied, compared and dropped after its system") {
  auto token = std::make_shared<int>(0);
  const std::weak_ptr<int> watch = token;
  tx::actor_ref ref;
  {
    tact::actor_system system{{.workers = 1}};
    ref = tx::spawn(system, holding(std::move(token)));
    tx::send(ref, 1);
    system.stop();
  }
  tx::actor_ref copy = ref;
  CHECK(copy == ref);
  CHECK(std::hash<tx::actor_ref>{}(copy) == std::hash<tx::actor_ref>{}(ref));
  ref.reset();
  CHECK_FALSE(watch.expired());  // the actor lives while a reference does
  copy = tx::actor_ref{};
  CHECK(watch.expired());  // and goes, behaviour and all, with the last one
}

TEST_CASE("timers may be cancelled, queried, copied and dropped after their system") {
  int freed = 0;
  auto token = std::make_shared<int>(0);
  const std::weak_ptr<int> watch = token;
  tact::timer classic, transactional;
  {
    tact::actor_system system{{.workers = 1}};
    worker a{system};
    classic = tact::send_after(1h, a, *new note{freed});
    const tx::actor_ref target = tx::spawn(system, holding(std::move(token)));
    transactional = tx::send_after(1h, target, 2);
    a | tact::finished_msg;
    system.stop();  // ends both timers, undelivered
    CHECK(freed == 1);
  }
  CHECK(watch.expired());  // the ended timer let go of its actor
  for (tact::timer* t : {&classic, &transactional}) {
    CHECK_FALSE(t->active());
    CHECK_FALSE(t->cancel());
    const tact::timer copy = *t;
    CHECK(copy);
    *t = tact::timer{};
  }
  CHECK(freed == 1);
}

TEST_CASE("a request may be answered or destroyed after its system, and its ask_result read") {
  question* kept = nullptr;
  std::optional<tact::ask_result<int>> outcome;
  bool end_by_stop = GENERATE(false, true);
  {
    tact::actor_system system{{.workers = 1}};
    hoarder h{system};
    if (end_by_stop) {
      // Waited on from another thread when stop() comes: ended as no_reply.
      std::thread asker{[&] { outcome.emplace(tact::ask(h, question{}, 1h)); }};
      REQUIRE(tact::test::eventually([&] { return h.kept.load() != nullptr; }));
      h | tact::finished_msg;
      system.stop();
      asker.join();
    } else {
      // Never answered: it times out.
      outcome.emplace(tact::ask(h, question{}, 1ms));
      h | tact::finished_msg;
      system.stop();
    }
    kept = h.kept.load();
  }
  REQUIRE(kept != nullptr);
  kept->reply(7);  // too late: nobody waits for it, and nothing is touched
  delete kept;
  REQUIRE(outcome);
  CHECK_FALSE(outcome->has_value());
  CHECK(outcome->error() == (end_by_stop ? tact::ask_error::no_reply : tact::ask_error::timeout));
}

TEST_CASE("between stop() and destruction, sends are dead letters and sponsors run nothing") {
  tact::test::diagnostics_log log;
  tact::actor_system system{{.workers = 1, .on_diagnostic = log.handler()}};
  tact::sponsor bound{system};
  worker& on_sponsor = bound.spawn<worker>();
  worker a{system};
  const tx::actor_ref ref = tx::spawn(system, holding(nullptr));
  a | tact::finished_msg;
  on_sponsor | tact::delete_msg;
  REQUIRE(bound.run_until_quiescent() == 1);
  system.stop();
  const std::uint64_t before = system.stats().total.dead_letters;
  note n;
  a | n;
  tx::send(ref, 3);
  CHECK(system.stats().total.dead_letters == before + 2);
  CHECK(bound.run_pending() == 0);
  CHECK(bound.run_until_quiescent() == 0);
}
