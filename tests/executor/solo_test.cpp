// A worker that runs alone (docs/design.md, "Kept queues"): with every
// other worker stood down by the governor, its batch takes in the mail of
// all its queues and their sends merge into it. The count is set by hand
// here (epochs far longer than the test keep it), so every batch of the
// run is a solo turn's. What every send keeps must hold: each message
// once, each sender's in order, one behaviour of an actor at a time, a
// behaviour that waits (an ask) included, with threads sending meanwhile.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "executor/executor.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
using tact::test::sequenced;
using tact::test::token;

struct question : tact::request<bool> {};

struct answerer : tact::actor {
  tact::allocation receive(question& q) {
    q.reply(true);
    return Nodelete;
  }
};

// Passes tokens on to random wanderers; every `ask_every`-th token it
// handles, it first asks the answerer and waits. Checks that its
// behaviours never overlap (the wait included) and that letters from each
// thread arrive in order.
struct wanderer : tact::actor {
  std::vector<std::unique_ptr<wanderer>>* all = nullptr;
  answerer* oracle = nullptr;
  std::uint64_t ask_every = 0;
  std::atomic<std::uint64_t>* arrived = nullptr;
  std::atomic<bool> in_receive{false};
  std::uint64_t overlaps = 0;
  std::uint64_t handled = 0;
  std::uint64_t answered = 0;
  tact::test::fifo_check letters;

  void enter() {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
  }
  void leave() { in_receive.store(false, std::memory_order_release); }

  tact::allocation receive(token& t) {
    enter();
    ++handled;
    if (ask_every != 0 && handled % ask_every == 0) {
      const tact::ask_result<bool> a = tact::ask(*oracle, question{}, 60s);
      if (a.has_value() && *a) ++answered;
    }
    leave();
    if (t.hops_left == 0) {
      arrived->fetch_add(1, std::memory_order_relaxed);
      return Nodelete;
    }
    --t.hops_left;
    *(*all)[t.next_random() % all->size()] | t;
    return Nodelete;
  }
  tact::allocation receive(sequenced& m) {
    enter();
    letters.accept(m);
    leave();
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a worker running alone keeps every message's guarantees, waits included") {
  const std::uint32_t workers = GENERATE(2u, 8u);
  const std::uint64_t ask_every = GENERATE(0u, 97u);
  INFO(workers << " workers, an ask every " << ask_every << " tokens");
  // Epochs far longer than the test: the governor keeps the count set here.
  tact::actor_system system{{.workers = workers, .adapt_every = std::chrono::hours{1}}};
  tact::detail::executor_of(system).set_active(1);
  for (std::uint32_t w = 1; w < workers; ++w)
    while (!system.stats().load[w].resting) std::this_thread::yield();

  // Wanderers on every queue (placed round robin from main), and an
  // answerer; tokens wander among them at random.
  const std::uint32_t queues = 16 * workers;
  std::vector<std::unique_ptr<wanderer>> all;
  std::atomic<std::uint64_t> arrived{0};
  auto& oracle = system.spawn<answerer>();
  for (std::uint32_t i = 0; i < 2 * queues; ++i) {
    auto& w = all.emplace_back(std::make_unique<wanderer>());
    w->all = &all;
    w->oracle = &oracle;
    w->ask_every = ask_every;
    w->arrived = &arrived;
  }
  const std::uint64_t tokens = 64;
  const std::uint64_t hops = tact::test::scaled(20'000);
  std::vector<token> moving(tokens);
  for (std::uint64_t i = 0; i < tokens; ++i) {
    moving[i].id = i;
    moving[i].hops_left = hops;
    moving[i].rng = 0x9e3779b97f4a7c15u * (i + 1);
    *all[i % all.size()] | moving[i];
  }
  // Letters from threads meanwhile, to every wanderer in turn.
  constexpr std::uint64_t senders = 2;
  const std::uint64_t per_sender = tact::test::scaled(4'000);
  std::vector<wanderer*> to;
  for (const auto& w : all) to.push_back(w.get());
  const auto letters = tact::test::letters_from_threads(to, senders, per_sender);
  system.await_quiescence();

  CHECK(arrived.load() == tokens);
  std::uint64_t handled = 0;
  std::uint64_t asked = 0;
  std::uint64_t answered = 0;
  std::uint64_t received = 0;
  for (const auto& w : all) {
    handled += w->handled;
    asked += ask_every != 0 ? w->handled / ask_every : 0;
    answered += w->answered;
    received += w->letters.received();
    CHECK(w->overlaps == 0);
    CHECK(w->letters.clean());
  }
  CHECK(handled == tokens * (hops + 1));
  CHECK(answered == asked);
  CHECK(received == senders * per_sender);
  const tact::system_stats s = system.stats();
  // Only worker 0 ran; without waits, most hops joined the batch in hand:
  // far fewer batches than messages. (A behaviour that waits holds every
  // queue its batch took in until nothing waits, and the mail runs from
  // the held queue meanwhile, a take per queue with mail.)
  for (std::uint32_t w = 1; w < workers; ++w) CHECK(s.workers[w].messages_processed == 0);
  if (ask_every == 0) CHECK(s.total.gulps * 4 < s.total.messages_processed);
  CHECK(s.total.suspensions == asked);
  CHECK(tact::test::conservation_of(system));
  for (const auto& w : all) *w | tact::finished_msg;
  oracle | tact::delete_msg;
  system.stop();
}
