#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>

#include <tact/defaults.hpp>
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

namespace {

struct race {};

// One step of a client's chain (see chain()), and the item it sends.
struct chained {
  std::uint32_t client;
  std::uint64_t seq;
};

constexpr std::uint32_t clients = 4;

// What a racing_sink saw of the clients' items.
struct seen {
  std::atomic<std::uint64_t> produced{0};  // staged by the clients so far
  std::uint64_t received = 0;
  std::uint64_t next[clients] = {};  // each client's next seq
  std::uint64_t out_of_order = 0;
  std::uint64_t largest_backlog = 0;
};

// A sink that starts parallel and counts its races by becoming. The first
// race waits in its handler until the second, run by the other worker, has
// committed (its send to `witness` runs after its commit): the first then
// loses its compare-and-swap, which at collision_limit 1 serializes the
// actor. Items come after that, one at a time on its home queue, so the
// plain counters in `o` are written by one thread at a time.
struct racing_sink {
  seen* o;
  std::atomic<int>* entered;
  std::atomic<bool>* committed;
  tx::actor_ref witness;
  tx::behaviour operator()(std::uint64_t races) const {
    return {[*this, races](race) {
              if (entered->fetch_add(1) == 0)
                while (!committed->load()) std::this_thread::yield();
              tx::become((*this)(races + 1));
              tx::send(witness, races);
            },
            [o = o](chained c) {
              if (c.seq != o->next[c.client]++) ++o->out_of_order;
              ++o->received;
              const std::uint64_t backlog =
                  o->produced.load(std::memory_order_relaxed) - o->received + 1;
              o->largest_backlog = std::max(o->largest_backlog, backlog);
            }};
  }
};

// A system with collision_limit 1 and the given collision_bound, and in it
// a racing_sink that collisions have serialized. Two workers, three
// queues, so that what this thread creates and sends (round robin over
// the queues) puts the two races on different workers (see
// contention_test.cpp): the witness's home on queue 0, the sink's on 1,
// the races on 2 and 0.
struct serialized_sink {
  explicit serialized_sink(std::uint32_t bound)
      : system{{.workers = 2, .queues = 3, .collision_limit = 1, .collision_bound = bound}} {
    const tx::actor_ref witness =
        tx::spawn(system, {[this](std::uint64_t) { committed.store(true); }});
    to = tx::spawn(system, racing_sink{&o, &entered, &committed, witness}(0));
    tx::send(to, race{});
    tx::send(to, race{});
    system.await_quiescence();
  }

  tact::actor_system system;
  seen o;
  std::atomic<int> entered{0};
  std::atomic<bool> committed{false};
  tx::actor_ref to;
};

// A client: a chain of `count` steps, each sending one item to `to` and
// the next step to itself, as tx_counter's clients do; `step` of them per
// handler. Serialized, so that a muted commit holds its chain back (a
// parallel actor's next step may run on another worker meanwhile).
tx::behaviour chain(const tx::actor_ref& to, std::atomic<std::uint64_t>& produced,
                    std::uint64_t count, std::uint64_t step) {
  return {[to, &produced, count, step](chained c) {
    const std::uint64_t now = std::min(step, count - c.seq);
    for (std::uint64_t i = 0; i < now; ++i) {
      produced.fetch_add(1, std::memory_order_relaxed);
      tx::send(to, chained{c.client, c.seq + i});
    }
    if (c.seq + now < count) tx::send(tx::self(), chained{c.client, c.seq + now});
  }};
}

// Starts the clients on s's sink and waits for the system to be quiescent.
void run_clients(serialized_sink& s, std::uint64_t count, std::uint64_t step) {
  for (std::uint32_t c = 0; c < clients; ++c)
    tx::send(tx::spawn(s.system, chain(s.to, s.o.produced, count, step), tx::mode::serialized),
             chained{c, 0});
  s.system.await_quiescence();
}

}  // namespace

// An actor that collisions serialized runs on one worker, which clients on
// all workers can outrun without end (docs/flow_control.md): its mailbox
// is bounded from then on by system_config::collision_bound, and a client
// committing to it full is muted as for tx::bounded. Fails without the
// bound: the clients run thousands of items ahead of the sink.
TEST_CASE("an actor serialized by collisions gets a bounded mailbox",
          "[transactional][mailbox_bound]") {
  constexpr std::uint32_t bound = 64;
  constexpr std::uint64_t count = 5'000;
  serialized_sink s{bound};
  REQUIRE(s.system.stats().total.tx_serializations == 1);
  run_clients(s, count, 1);
  CHECK(s.o.received == clients * count);
  CHECK(s.o.out_of_order == 0);
  // A commit that finds the sink full still queues its item, counted
  // before: two items a client past the bound, and the item being received.
  CHECK(s.o.largest_backlog <= bound + 2 * clients + 1);
  const tact::worker_stats total = s.system.stats().total;
  CHECK(total.sends_over_bound == 0);
  CHECK(total.tx_rollbacks == 0);
  CHECK(total.messages_sent == total.messages_processed);
  s.system.stop();
}

// Each client stages its whole chain in one commit, more items than the
// default bound: a commit counts its run before posting it, so with any
// bound it finds the sink full and its client is muted after it. 0 turns
// the bound off (and is not replaced by the default): nobody is muted.
TEST_CASE("a collision bound of zero leaves a serialized actor's mailbox unbounded",
          "[transactional][mailbox_bound]") {
  const std::uint32_t bound = GENERATE(0u, 64u);
  INFO("collision_bound " << bound);
  constexpr std::uint64_t count = tact::defaults::collision_bound + 1;
  serialized_sink s{bound};
  REQUIRE(s.system.stats().total.tx_serializations == 1);
  run_clients(s, count, count);
  CHECK(s.o.received == clients * count);
  CHECK(s.o.out_of_order == 0);
  const tact::worker_stats total = s.system.stats().total;
  if (bound == 0)
    CHECK(total.sends_waited == 0);
  else
    CHECK(total.sends_waited > 0);
  CHECK(total.sends_over_bound == 0);
  s.system.stop();
}
