// What steady work must not allocate. Once warmed up, classic sends take
// nothing from the heap (copy queues hold envelopes, the messages are the
// program's), transactional sends on one worker take their messages from
// the thread's block cache, and behaviours that never wait make no fiber.
// Behaviours that do wait get fibers as many as wait at once, reused after.
//
// Every allocation of the process is counted, once, while a test arms the
// count: operator new and the engine's own malloc, replaced as in the
// fault tests (support/replaced_allocation.hpp), and its realloc (a copy
// queue shrinking), through the linker's --wrap as well. Not run under
// the sanitizers, which replace the allocator themselves.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/ping_pong.hpp"
#include "support/replaced_allocation.hpp"
#include "support/test_support.hpp"

extern "C" void* __real_realloc(void* p, std::size_t size);

namespace {

std::atomic<bool> armed{false};
std::atomic<std::uint64_t> allocations{0};

// Allocations made by any thread while `work` runs; the system must be
// quiescent before and is made quiescent again before the count is read.
template <class Work>
std::uint64_t allocations_during(tact::actor_system& system, Work work) {
  system.await_quiescence();
  allocations.store(0);
  armed.store(true);
  work();
  system.await_quiescence();
  armed.store(false);
  return allocations.load();
}

}  // namespace

// Counted while armed; none fails.
bool tact::test::allocation_fails() noexcept {
  if (armed.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return false;
}

extern "C" void* __wrap_realloc(void* p, std::size_t size) {
  (void)tact::test::allocation_fails();
  return __real_realloc(p, size);
}

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;

using tact::test::ball;
using tact::test::player;

void play(player& first, ball& b, std::uint64_t hits) {
  b.hits_left = hits;
  first | b;
}

TEST_CASE("classic sends allocate nothing once warmed up, and make no fiber") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{{.workers = workers}};
  player a{system};
  player b{system};
  a.other = &b;
  b.other = &a;
  ball ping;
  // Warm-up: queues, parking, the workers' first steps, until four plays
  // in a row allocate nothing. How long that takes depends on the
  // schedule: a conversation that one worker keeps to itself passes its
  // mail from batch to batch, so a queue's mailbox may get its first
  // chunk, or give back one it grew, only at a later send from this
  // thread; and a queue whose mail a worker running alone took into
  // another queue's batch (docs/design.md, "Kept queues") gets its second
  // chunk only at its next gulp of its own.
  const std::uint64_t hits = tact::test::scaled(200'000);
  for (int warm = 0, quiet = 0; warm < 64 && quiet < 4; ++warm)
    quiet = allocations_during(system, [&] { play(a, ping, hits); }) == 0 ? quiet + 1 : 0;
  CHECK(allocations_during(system, [&] { play(a, ping, hits); }) == 0);
  CHECK(ping.hits_left == 0);
  const tact::worker_stats totals = system.stats().total;
  CHECK(totals.fibers_made == 0);
  CHECK(totals.suspensions == 0);
  a | tact::finished_msg;
  b | tact::finished_msg;
  system.stop();
}

// Counts down by re-sending a fresh value to the other of a pair.
tx::behaviour bouncer(tx::actor_ref* other, std::atomic<std::uint64_t>* ended) {
  return {[other, ended](std::uint64_t n) {
    if (n == 0)
      ended->fetch_add(1);
    else
      tx::send(*other, n - 1);
  }};
}

TEST_CASE("transactional sends on one worker allocate nothing once warmed up") {
  // On one worker every message is freed by the thread that made it, so
  // its block is there for the next send. With more workers blocks move
  // between the threads' caches, and a thread that runs dry cuts new
  // blocks, now and then from a new chunk: fewer allocations, not none. One queue, warmed by two
  // sends from outside: a send from outside takes the queues round robin, and the first to reach
  // one after a gulp makes the first chunk of the mailbox (the gulp swaps mailbox and batch); the
  // pair's own sends run from the worker's stack and warm neither.
  tact::actor_system system{{.workers = 1, .queues = 1}};
  std::atomic<std::uint64_t> ended{0};
  tx::actor_ref a;
  tx::actor_ref b;
  a = tx::spawn(system, bouncer(&b, &ended));
  b = tx::spawn(system, bouncer(&a, &ended));
  tx::send(a, std::uint64_t{10'000});
  system.await_quiescence();
  tx::send(a, std::uint64_t{10'000});
  const std::uint64_t hits = tact::test::scaled(200'000);
  // The first message, sent from this thread, whose cache is empty, is cut
  // from the chunk its warm-up sends were cut from (see block_pool.hpp).
  CHECK(allocations_during(system, [&] { tx::send(a, hits); }) == 0);
  CHECK(ended.load() == 3);
  a.reset();
  b.reset();
  system.stop();
}

struct square : tact::request<long> {
  explicit square(long v) : value{v} {}
  long value;
};
struct go : tact::message {};

struct calculator : tact::actor {
  explicit calculator(tact::actor_system& system) : tact::actor{system} {}
  tact::allocation receive(square& m) {
    m.reply(m.value * m.value);
    return Nodelete;
  }
};

// Asks its calculator `asks` times in one receive, checking each answer.
struct asker : tact::actor {
  asker(tact::actor_system& system, calculator& c, long asks)
      : tact::actor{system}, calculator_{c}, asks_{asks} {}
  tact::allocation receive(go&) {
    for (long i = 0; i < asks_; ++i) {
      auto r = tact::ask(calculator_, square{i}, 60s);
      if (!r || *r != i * i) wrong.fetch_add(1);
    }
    return Nodelete;
  }
  calculator& calculator_;
  long asks_;
  std::atomic<long> wrong{0};
};

TEST_CASE("behaviours that wait reuse their fibers: as many as wait at once") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  // `waiting` askers receive their go together, rounds times over; each
  // asks `asks` times. Up to `waiting` of them wait at once on a worker.
  const long waiting = GENERATE(1L, 8L);
  const int rounds = 50;
  const long asks = 20;
  tact::actor_system system{{.workers = workers}};
  calculator c{system};
  std::vector<std::unique_ptr<asker>> askers;
  for (long k = 0; k < waiting; ++k) askers.push_back(std::make_unique<asker>(system, c, asks));
  std::vector<go> starts(static_cast<std::size_t>(waiting));
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < askers.size(); ++k) *askers[k] | starts[k];
    system.await_quiescence();
  }
  long wrong = 0;
  for (auto& a : askers) wrong += a->wrong.load();
  CHECK(wrong == 0);
  const tact::worker_stats totals = system.stats().total;
  INFO("suspensions " << totals.suspensions << ", fibers made " << totals.fibers_made);
  // On one worker nothing can answer before its asker waits; with two an
  // answer may now and then come first, and then nobody waits.
  if (workers == 1) {
    CHECK(totals.suspensions == static_cast<std::uint64_t>(rounds * waiting * asks));
    CHECK(totals.fibers_made >= 1);
  }
  // Each worker keeps what it made: at most one per behaviour waiting on
  // it at once, however many asks went before.
  CHECK(totals.fibers_made <= static_cast<std::uint64_t>(waiting) * workers);
  for (auto& a : askers) *a | tact::finished_msg;
  c | tact::finished_msg;
  system.stop();
}

}  // namespace
