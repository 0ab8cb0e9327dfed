// Timers cancelled from behaviours right around their due time, classic and
// transactional, under load: cancel() says whether it won, and a timer
// whose cancel won is never delivered, even when its message was already
// queued; one whose cancel lost is delivered exactly once. Delays and the
// moments of cancelling are drawn from the run's seed. The messages are
// heap messages, freed whichever way their timer ends (the census checks).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using clock_type = std::chrono::steady_clock;
using tact::test::mix;

constexpr std::int64_t longest_delay_ns = 200'000;
constexpr auto deadlock_guard = 60s;  // a failure, never a wait that passes

std::atomic<std::int64_t> live_alarms{0};

struct alarm : tact::message {
  explicit alarm(std::uint64_t i) : id{i} {
    set_allocation(tact::allocation::Delete);
    live_alarms.fetch_add(1, std::memory_order_relaxed);
  }
  ~alarm() override { live_alarms.fetch_sub(1, std::memory_order_relaxed); }
  std::uint64_t id;
};

// Per timer: how often it was delivered, and whether its cancel won.
struct ledger {
  explicit ledger(std::size_t timers) : delivered(timers), cancel_won(timers) {}
  std::vector<std::atomic<int>> delivered;
  std::vector<std::atomic<bool>> cancel_won;
};

struct bell : tact::actor {
  explicit bell(ledger& l) : ledger_{l} {}
  tact::allocation receive(alarm& a) {
    ledger_.delivered[a.id].fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }
  ledger& ledger_;
};

struct round_msg : tact::message {};

// Each round: a timer to a classic bell and one to a transactional bell,
// each due within 200 µs; then a wait of about as long; then both cancelled.
struct canceller : tact::actor {
  canceller(std::uint64_t id, std::uint64_t rounds, std::vector<std::unique_ptr<bell>>& bells,
            const tx::actor_ref& tx_bell, ledger& l, std::uint64_t seed)
      : id_{id}, rounds_{rounds}, bells_{bells}, tx_bell_{tx_bell}, ledger_{l}, seed_{seed} {}

  tact::allocation receive(round_msg&) {
    const std::uint64_t classic_id = 2 * (id_ * rounds_ + done_);
    const std::uint64_t tx_id = classic_id + 1;
    const auto delay = [&](std::uint64_t key) {
      return std::chrono::nanoseconds{mix(seed_, key) % longest_delay_ns};
    };
    bell& to = *bells_[mix(seed_, ~classic_id) % bells_.size()];
    tact::timer classic = tact::send_after(delay(classic_id), to, *new alarm{classic_id});
    tact::timer transactional = tx::send_after(delay(tx_id), tx_bell_, tx_id);
    const auto until = clock_type::now() + delay(classic_id ^ 0x5555);
    while (clock_type::now() < until) std::this_thread::yield();
    if (classic.cancel()) ledger_.cancel_won[classic_id].store(true);
    if (transactional.cancel()) ledger_.cancel_won[tx_id].store(true);
    if (++done_ == rounds_) return Finished;
    *this | again;
    return Nodelete;
  }
  round_msg again;

 private:
  const std::uint64_t id_;
  const std::uint64_t rounds_;
  std::uint64_t done_ = 0;
  std::vector<std::unique_ptr<bell>>& bells_;
  const tx::actor_ref tx_bell_;
  ledger& ledger_;
  const std::uint64_t seed_;
};

struct sentinel : tact::message {};
struct last_bell : tact::actor {
  tact::allocation receive(sentinel&) {
    rung.store(true, std::memory_order_release);
    return Nodelete;
  }
  std::atomic<bool> rung{false};
};

}  // namespace

TEST_CASE("timers cancelled from behaviours around their due time: delivered exactly when cancel lost") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t seed = tact::test::test_seed();
  INFO("TACT_TEST_SEED=" << seed << ", " << workers << " workers");
  constexpr std::uint64_t cancellers = 6;
  const std::uint64_t rounds = tact::test::scaled(300);
  ledger l{2 * cancellers * rounds};
  {
    tact::actor_system system{tact::test::configured({.workers = workers})};
    std::vector<std::unique_ptr<bell>> bells;
    for (int i = 0; i < 4; ++i) bells.push_back(std::make_unique<bell>(l));
    const tx::actor_ref tx_bell = tx::spawn(system, {[&l](std::uint64_t id) {
      l.delivered[id].fetch_add(1, std::memory_order_relaxed);
    }});
    std::vector<std::unique_ptr<canceller>> actors;
    for (std::uint64_t c = 0; c < cancellers; ++c)
      actors.push_back(std::make_unique<canceller>(c, rounds, bells, tx_bell, l, seed));
    for (auto& a : actors) *a | a->again;
    system.await_quiescence();
    // Every timer is due within 200 µs of its round: one due later than all
    // of them fires after they were all posted.
    last_bell last;
    sentinel s;
    tact::send_after(10ms, last, s);
    const auto give_up = clock_type::now() + deadlock_guard;
    while (!last.rung.load(std::memory_order_acquire) && clock_type::now() < give_up)
      std::this_thread::sleep_for(1ms);
    REQUIRE(last.rung.load());
    system.await_quiescence();

    std::uint64_t won = 0;
    std::uint64_t lost = 0;
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < l.delivered.size(); ++i) {
      const int n = l.delivered[i].load();
      if (l.cancel_won[i].load()) {
        ++won;
        wrong += n == 0 ? 0 : 1;
      } else {
        ++lost;
        wrong += n == 1 ? 0 : 1;
      }
    }
    CHECK(wrong == 0);
    CHECK(live_alarms.load() == 0);
    CHECK(tact::test::conservation_of(system));
    std::cout << "timers racing their cancel, " << workers << " workers: cancel won " << won
              << ", lost " << lost << "\n";
    // The race was run: some cancels came too late. Not with one worker,
    // where the cancelling behaviour holds the only thread that could
    // deliver, so every cancel wins against a timer already queued; with
    // more (GENERATE runs 8 last), hundreds of each.
    static std::uint64_t lost_in_all = 0;
    lost_in_all += lost;
    if (workers == 8) CHECK(lost_in_all > 0);
    for (auto& b : bells) *b | tact::finished_msg;
    last | tact::finished_msg;
    system.stop();
    CHECK(tact::test::conservation_of(system));
    tact::test::record_figures(system);
  }
}
