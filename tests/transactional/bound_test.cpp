#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>

#include <tact/transactional.hpp>

// A bounded transactional actor (docs/flow_control.md, "Transactional
// actors"), from the user's side: a handler whose commit finds it full
// commits all the same, and its actor is then muted until the mailbox is
// down to half, so a producer that works in steps never runs more than a
// step past the bound; nothing is lost or reordered.
namespace {

namespace tx = tact::tx;

struct start {};
struct more {
  std::uint64_t left;
};
struct item {
  std::uint64_t seq;
};

struct observed {
  std::atomic<std::uint64_t> produced{0};  // staged by the producer so far
  std::uint64_t received = 0;              // by the sink, one at a time
  std::uint64_t out_of_order = 0;
  std::uint64_t largest_backlog = 0;
};

// Serialized (and bounded): one handler at a time, so its plain counters
// in `o` are written by one thread at a time.
tx::behaviour sink(observed& o) {
  return {[&o](item m) {
    if (m.seq != o.received) ++o.out_of_order;
    ++o.received;
    const std::uint64_t backlog = o.produced.load(std::memory_order_relaxed) - o.received + 1;
    o.largest_backlog = std::max(o.largest_backlog, backlog);
  }};
}

void stage(const tx::actor_ref& to, observed& o, std::uint64_t sent, std::uint64_t left,
           std::uint64_t step) {
  const std::uint64_t now = std::min(left, step);
  for (std::uint64_t i = 0; i < now; ++i) {
    o.produced.fetch_add(1, std::memory_order_relaxed);
    tx::send(to, item{sent + i});
  }
  if (now < left) tx::send(tx::self(), more{left - now});
}

tx::behaviour producer(const tx::actor_ref& to, observed& o, std::uint64_t count,
                       std::uint64_t step) {
  return {
      [to, &o, count, step](start) { stage(to, o, 0, count, step); },
      [to, &o, count, step](more m) { stage(to, o, count - m.left, m.left, step); },
  };
}

// Runs a producer of `count` items, `step` per handler, into a sink that is
// bounded (bound != 0) or else serialized, until the system is quiescent.
void produce(tact::actor_system& system, observed& o, std::uint32_t bound, std::uint64_t count,
             std::uint64_t step) {
  const tx::actor_ref to = bound != 0 ? tx::spawn(system, sink(o), tx::bounded{bound})
                                      : tx::spawn(system, sink(o), tx::mode::serialized);
  const tx::actor_ref from = tx::spawn(system, producer(to, o, count, step), tx::mode::serialized);
  tx::send(from, start{});
  system.await_quiescence();
}

}  // namespace

TEST_CASE("a producer committing to a full bounded actor is muted until it drains",
          "[transactional][mailbox_bound]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr std::uint32_t bound = 64;
  constexpr std::uint64_t step = 16;
  constexpr std::uint64_t count = 20'000;
  INFO(workers << " workers");
  // Two queues per worker at least: with one queue in all, the producer's
  // next step would queue behind its sends anyway.
  tact::actor_system system{{.workers = workers, .queues = 2 * workers}};
  observed o;
  produce(system, o, bound, count, step);
  CHECK(o.received == count);
  CHECK(o.out_of_order == 0);
  // A commit that finds the sink full still queues its whole step, and the
  // producer counts a step before it commits it: two steps past the bound,
  // and the item being received.
  CHECK(o.largest_backlog <= bound + 2 * step + 1);
  const tact::worker_stats s = system.stats().total;
  if (workers == 1) CHECK(s.sends_waited > 0);
  CHECK(s.sends_over_bound == 0);
  CHECK(s.tx_rollbacks == 0);
  system.stop();
}

TEST_CASE("a commit's burst to a serialized actor arrives whole and in order, bounded or not",
          "[transactional][mailbox_bound]") {
  // Steps longer than the runs a commit posts in one lock section (256),
  // so each commit posts several, from a producer on another queue.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint32_t bound = GENERATE(0u, 64u);
  constexpr std::uint64_t step = 600;
  constexpr std::uint64_t count = 30'000;
  INFO(workers << " workers, bound " << bound);
  tact::actor_system system{{.workers = workers, .queues = 2 * workers}};
  observed o;
  produce(system, o, bound, count, step);
  CHECK(o.received == count);
  CHECK(o.out_of_order == 0);
  if (bound != 0) CHECK(o.largest_backlog <= bound + 2 * step + 1);
  const tact::worker_stats s = system.stats().total;
  CHECK(s.sends_over_bound == 0);
  CHECK(s.tx_rollbacks == 0);
  CHECK(s.messages_sent == s.messages_processed);
  system.stop();
}

TEST_CASE("a bounded transactional actor is serialized", "[transactional][mailbox_bound]") {
  tact::actor_system system{{.workers = 2}};
  observed o;
  const tx::actor_ref to = tx::spawn(system, sink(o), tx::bounded{8});
  // Every message runs on its home queue, one at a time: 1,000 sends from
  // this thread arrive in order.
  for (std::uint64_t i = 0; i < 1'000; ++i) {
    o.produced.fetch_add(1, std::memory_order_relaxed);
    tx::send(to, item{i});
  }
  system.await_quiescence();
  CHECK(o.received == 1'000);
  CHECK(o.out_of_order == 0);
  system.stop();
}
