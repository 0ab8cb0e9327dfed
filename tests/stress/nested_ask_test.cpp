#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Nested asks under load: fronts, driven by the test thread, each ask a
// middle, which asks a leaf before answering; threads outside the actor
// world ask fronts too (so helping askers run behaviours that wait). Every
// actor also reports to a recorder, before and after its asks. Checked:
// every answer is right (nothing timed out or was lost), every request
// reached a leaf exactly once, each actor ran one message at a time, and
// messages arrived in send order per sender, the test thread's steps to a
// front and the reports each actor sends across its suspensions (a few
// after each, which the resumed behaviour holds back and posts together
// when it returns, as a batch does). Bounded
// counts, scaled down under the sanitizers (TACT_STRESS_SCALE).
namespace {

using namespace std::chrono_literals;

constexpr auto patient = 60s;  // a timeout here is a failure, never a wait that passes
constexpr int fronts = 24;
constexpr int middles = 8;
constexpr int leaves = 4;
constexpr int askers = 2;
constexpr int reports_after = 3;  // per ask, once it is answered

struct square : tact::request<long> {
  explicit square(long v) : value{v} {}
  long value;
};
struct relay : tact::request<long> {
  explicit relay(long v) : value{v} {}
  long value;
};
struct probe : tact::request<long> {
  explicit probe(long v) : value{v} {}
  long value;
};
struct step : tact::message {
  std::uint64_t seq = 0;
};
// One per report: from actor `sender`, its seq-th.
struct report : tact::test::sequenced {
  using sequenced::sequenced;
};

// Counts behaviours of one actor running at once.
struct one_at_a_time {
  std::atomic<int> inside{0};
  std::atomic<std::uint64_t> overlaps{0};
  void enter() {
    if (inside.fetch_add(1, std::memory_order_acq_rel) != 0)
      overlaps.fetch_add(1, std::memory_order_relaxed);
  }
  void leave() { inside.fetch_sub(1, std::memory_order_acq_rel); }
};

struct recorder : tact::actor {
  explicit recorder(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(report& r) {
    reports.accept(r);
    return Nodelete;
  }
  tact::test::fifo_check reports;
};

// An actor that reports to the recorder, numbering its reports.
struct reporting : tact::actor {
  reporting(tact::actor_system& system, recorder& r, int id)
      : tact::actor{system}, recorder_{r}, id_{id} {}
  void report_now() {
    auto* m = new report{static_cast<std::uint64_t>(id_), sent_++};
    m->set_allocation(tact::allocation::Delete);
    recorder_ | *m;
  }
  void report_after_ask() {
    for (int i = 0; i < reports_after; ++i) report_now();
  }
  recorder& recorder_;
  const int id_;
  std::uint64_t sent_ = 0;
  one_at_a_time guard;
  std::atomic<std::uint64_t> wrong{0};
};

struct leaf : tact::actor {
  explicit leaf(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(square& m) {
    guard.enter();
    received.fetch_add(1, std::memory_order_relaxed);
    m.reply(m.value * m.value);
    guard.leave();
    return Nodelete;
  }
  one_at_a_time guard;
  std::atomic<std::uint64_t> received{0};
};

struct middle : reporting {
  middle(tact::actor_system& system, recorder& r, int id, std::vector<leaf*>& leaves)
      : reporting{system, r, id}, leaves_{leaves} {}
  tact::allocation receive(relay& m) {
    guard.enter();
    report_now();
    auto r = tact::ask(*leaves_[static_cast<std::size_t>(m.value) % leaves_.size()],
                       square{m.value}, patient);
    report_after_ask();
    if (!r) wrong.fetch_add(1, std::memory_order_relaxed);
    m.reply(r ? *r + 1 : -1);
    guard.leave();
    return Nodelete;
  }
  std::vector<leaf*>& leaves_;
};

struct front : reporting {
  front(tact::actor_system& system, recorder& r, int id, std::vector<middle*>& middles)
      : reporting{system, r, id}, middles_{middles} {}
  // The answer to v, through a middle and a leaf.
  long through(long v) {
    report_now();
    auto r = tact::ask(*middles_[static_cast<std::size_t>(v) % middles_.size()], relay{v},
                       patient);
    report_after_ask();
    if (!r || *r != v * v + 1) wrong.fetch_add(1, std::memory_order_relaxed);
    return r ? *r : -1;
  }
  tact::allocation receive(step& s) {
    guard.enter();
    if (s.seq != next_step_) wrong.fetch_add(1, std::memory_order_relaxed);
    next_step_ = s.seq + 1;
    (void)through(static_cast<long>(id_) * 1'000'000 + static_cast<long>(s.seq));
    ++steps;
    guard.leave();
    return Nodelete;
  }
  tact::allocation receive(probe& p) {
    guard.enter();
    p.reply(through(p.value));
    guard.leave();
    return Nodelete;
  }
  std::vector<middle*>& middles_;
  std::uint64_t next_step_ = 0;
  std::uint64_t steps = 0;
};

}  // namespace

TEST_CASE("nested asks deliver every message once, in order, one at a time per actor") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t rounds = tact::test::scaled(400);
  const std::uint64_t probes = tact::test::scaled(200);
  tact::actor_system system{tact::test::configured({.workers = workers})};
  recorder rec{system};
  std::vector<std::unique_ptr<leaf>> leaf_actors;
  std::vector<leaf*> leaf_refs;
  for (int i = 0; i < leaves; ++i) {
    leaf_actors.push_back(std::make_unique<leaf>(system));
    leaf_refs.push_back(leaf_actors.back().get());
  }
  std::vector<std::unique_ptr<middle>> middle_actors;
  std::vector<middle*> middle_refs;
  for (int i = 0; i < middles; ++i) {
    middle_actors.push_back(std::make_unique<middle>(system, rec, fronts + i, leaf_refs));
    middle_refs.push_back(middle_actors.back().get());
  }
  std::vector<std::unique_ptr<front>> front_actors;
  for (int i = 0; i < fronts; ++i)
    front_actors.push_back(std::make_unique<front>(system, rec, i, middle_refs));

  // Threads outside the actor world ask fronts meanwhile; they only count
  // (assertions stay on this thread).
  std::atomic<std::uint64_t> wrong_probes{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < askers; ++k)
    threads.emplace_back([&, k] {
      for (std::uint64_t i = 0; i < probes; ++i) {
        const long v = 500'000'000L + k * 1'000'000L + static_cast<long>(i);
        front& f = *front_actors[(static_cast<std::size_t>(k) * 7 + i) % front_actors.size()];
        auto r = tact::ask(f, probe{v}, patient);
        if (!r || *r != v * v + 1) wrong_probes.fetch_add(1);
      }
    });
  // Built in place: a copy of a message would be one never sent.
  std::vector<std::vector<step>> steps(fronts);
  for (std::vector<step>& per_front : steps) per_front = std::vector<step>(rounds);
  for (std::uint64_t r = 0; r < rounds; ++r)
    for (int i = 0; i < fronts; ++i) {
      step& s = steps[static_cast<std::size_t>(i)][r];
      s.seq = r;
      *front_actors[static_cast<std::size_t>(i)] | s;
    }
  for (std::thread& t : threads) t.join();
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));

  const std::uint64_t asked = fronts * rounds + askers * probes;
  std::uint64_t leaf_received = 0;
  std::uint64_t overlaps = 0;
  std::uint64_t wrong = 0;
  for (auto& l : leaf_actors) {
    leaf_received += l->received.load();
    overlaps += l->guard.overlaps.load();
  }
  for (auto& m : middle_actors) {
    overlaps += m->guard.overlaps.load();
    wrong += m->wrong.load();
  }
  std::uint64_t steps_run = 0;
  for (auto& f : front_actors) {
    overlaps += f->guard.overlaps.load();
    wrong += f->wrong.load();
    steps_run += f->steps;
  }
  CHECK(wrong_probes.load() == 0);
  CHECK(wrong == 0);
  CHECK(overlaps == 0);
  CHECK(rec.reports.out_of_order() == 0);
  CHECK(rec.reports.duplicates() == 0);
  CHECK(steps_run == fronts * rounds);
  CHECK(leaf_received == asked);
  // Each front reports before and after each ask, each middle before and
  // after each relay.
  CHECK(rec.reports.received() == 2 * (1 + reports_after) * asked);

  rec | tact::finished_msg;
  for (auto& l : leaf_actors) *l | tact::finished_msg;
  for (auto& m : middle_actors) *m | tact::finished_msg;
  for (auto& f : front_actors) *f | tact::finished_msg;
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));
  tact::test::record_figures(system);
}
