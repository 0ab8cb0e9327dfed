// stop() at a random point under load: threads keep sending to classic and
// transactional actors while the test finishes the classic ones at a point
// drawn from the run's seed and stops the system, and they go on sending
// after it stopped. Every send is accounted for: queued or rejected, and
// every queued message processed or discarded (reported as never
// received); each classic actor received an unbroken prefix of every
// sender's stream, once each.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

namespace tx = tact::tx;
using tact::test::mix;
using kind = tact::diagnostic_kind;
using tact::test::sequenced;

struct sink : tact::actor {
  explicit sink(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(sequenced& m) {
    fifo.accept(m);
    return Nodelete;
  }
  tact::test::fifo_check fifo;
};

std::atomic<std::int64_t> live_notes{0};

// A transactional message that counts its copies, so the census sees the
// ones stop() discards freed as well.
struct note {
  note() { live_notes.fetch_add(1, std::memory_order_relaxed); }
  note(const note&) { live_notes.fetch_add(1, std::memory_order_relaxed); }
  note& operator=(const note&) = delete;
  ~note() { live_notes.fetch_sub(1, std::memory_order_relaxed); }
};

}  // namespace

TEST_CASE("stop at a random point under load: every send is processed, discarded or rejected") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t seed = tact::test::test_seed();
  constexpr std::uint64_t threads = 3;
  constexpr std::size_t sinks = 32;
  constexpr std::size_t counters = 4;
  const std::uint64_t per_thread = tact::test::scaled(20'000);
  // Where the classic actors are finished, as a share of the load sent.
  const double stop_at = 0.05 + 0.9 * static_cast<double>(mix(seed, workers) % 1000) / 1000.0;
  INFO("TACT_TEST_SEED=" << seed << ", " << workers << " workers, stopped after " << stop_at
                         << " of the load");

  tact::test::diagnostic_tally diagnostics;
  std::atomic<std::uint64_t> tx_received{0};
  std::atomic<std::uint64_t> sends_made{0};
  {
    tact::actor_system system{
        tact::test::configured({.workers = workers, .on_diagnostic = diagnostics.handler()})};
    std::vector<std::unique_ptr<sink>> targets;
    for (std::size_t i = 0; i < sinks; ++i) targets.push_back(std::make_unique<sink>(system));
    std::vector<tx::actor_ref> tx_targets;
    for (std::size_t i = 0; i < counters; ++i)
      tx_targets.push_back(tx::spawn(
          system, {[&tx_received](note) { tx_received.fetch_add(1, std::memory_order_relaxed); }}));
    // Nodelete messages, alive to the end (stop() runs no allocation action
    // for those it discards), made as they are sent (a deque keeps them in
    // place), so that none is left unsent.
    std::vector<std::deque<sequenced>> messages(threads);
    std::vector<std::thread> senders;
    for (std::uint64_t t = 0; t < threads; ++t)
      senders.emplace_back([&, t] {
        std::vector<std::uint64_t> numbered(sinks, 0);
        for (std::uint64_t i = 0; i < per_thread; ++i) {
          const std::uint64_t draw = mix(seed, (t << 32) | i);
          if (draw % 4 == 0) {
            tx::send(tx_targets[(draw >> 8) % counters], note{});
          } else {
            const std::size_t to = (draw >> 8) % sinks;
            *targets[to] | messages[t].emplace_back(t, numbered[to]++);
          }
          sends_made.fetch_add(1, std::memory_order_release);
        }
      });
    const auto point = static_cast<std::uint64_t>(stop_at * static_cast<double>(threads * per_thread));
    while (sends_made.load(std::memory_order_acquire) < point) std::this_thread::yield();
    for (auto& s : targets) *s | tact::finished_msg;
    system.stop();
    for (std::thread& s : senders) s.join();  // some of them sent after the stop

    const tact::worker_stats total = system.stats().total;
    CHECK(tact::test::conservation_of(total));
    // Every send made, the pills included, was queued or rejected.
    CHECK(total.messages_sent + total.messages_rejected == sends_made.load() + sinks);
    std::uint64_t received = 0;
    std::uint64_t unclean = 0;
    for (const auto& s : targets) {
      received += s->fifo.received();
      unclean += s->fifo.clean() ? 0 : 1;
    }
    CHECK(unclean == 0);
    // What ran: the messages received, the pills, and those that found
    // their actor finished (each reported).
    CHECK(total.messages_processed ==
          received + tx_received.load() + sinks + diagnostics.count(kind::delivery_to_finished));
    // What was refused: sends to finished actors (each reported) and
    // transactional sends to the stopped system.
    CHECK(total.messages_rejected >= diagnostics.count(kind::send_to_finished));
    // What was discarded was reported: by stop(), and by a send that came
    // as stop() discarded (each its own).
    if (total.messages_discarded > 0) CHECK(diagnostics.count(kind::messages_unreceived) >= 1);
    CHECK(diagnostics.count(kind::messages_unreceived) <= 1 + total.messages_discarded);
    CHECK(diagnostics.other_than({kind::send_to_finished,
                                   kind::delivery_to_finished,
                                   kind::messages_unreceived}) == 0);
    tact::test::record_figures(system);
  }
  CHECK(live_notes.load() == 0);
}
