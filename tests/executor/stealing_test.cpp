// Work stealing as a program sees it: queues move between workers, and
// every classic-actor guarantee survives the move.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <sys/types.h>

#include <tact/tact.hpp>

#include "executor/executor.hpp"
#include "support/standing_thread.hpp"
#include "support/test_support.hpp"

namespace {

struct job : tact::message {
  std::uint64_t seq = 0;
};

// Counts its jobs, checks they arrive in send order, and burns a little
// CPU on each so that a queue of them is worth stealing.
struct worker_actor : tact::actor {
  std::atomic<std::uint64_t>* done = nullptr;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  std::atomic<int> inside{0};  // receives running right now: never more than one
  std::atomic<bool> overlapped{false};

  tact::allocation receive(job& j) {
    if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlapped = true;
    if (j.seq != received) ++out_of_order;
    ++received;
    volatile std::uint64_t sink = 0;
    for (int i = 0; i < 2000; ++i) sink = sink + static_cast<std::uint64_t>(i);
    inside.fetch_sub(1, std::memory_order_relaxed);
    done->fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
};

struct hold : tact::message {};

// Keeps its worker inside receive until `done` reaches `until`: only
// other workers can get there, by stealing the queues this one owns.
struct blocker : tact::actor {
  const std::atomic<std::uint64_t>* done = nullptr;
  std::uint64_t until = 0;
  tact::allocation receive(hold&) {
    while (done->load(std::memory_order_acquire) < until) std::this_thread::yield();
    return Nodelete;
  }
};

const char* name(tact::steal_policy p) {
  switch (p) {
    case tact::steal_policy::none:
      return "none";
    case tact::steal_policy::random:
      return "random";
    case tact::steal_policy::longest_victim:
      return "longest_victim";
    case tact::steal_policy::locality:
      return "locality";
  }
  return "?";
}

// Actors created from a thread outside the system get queues 0, 1, 2, ...
// round robin, and worker 0 owns the first queues / workers of them.
// Returns how many actors land on worker 0 when created in a row.
std::uint32_t worker0_queues(const tact::actor_system& system) {
  return system.queues() / system.workers();
}

}  // namespace

TEST_CASE("queued work behind a worker blocked in a long receive is finished by the others") {
  const auto policy = GENERATE(tact::steal_policy::random, tact::steal_policy::longest_victim,
                               tact::steal_policy::locality);
  const std::uint32_t workers = GENERATE(2u, 8u);
  // After a long idle period every parked worker sleeps for good; the
  // first one woken must then make another one watch again.
  const bool idle_first = GENERATE(false, true);
  // One queue waiting: no backlog to share, so it is taken only because
  // worker 0 is stuck (has not started a gulp for a while).
  const bool single = GENERATE(false, true);
  CAPTURE(name(policy), workers, idle_first, single);

  tact::actor_system system{{.workers = workers, .steal = policy}};
  const std::uint32_t mine = worker0_queues(system);
  REQUIRE(mine >= 2);
  std::atomic<std::uint64_t> done{0};
  blocker& stuck = system.spawn<blocker>();  // queue 0: worker 0's
  std::vector<std::unique_ptr<worker_actor>> busy;
  for (std::uint32_t q = 1; q < (single ? 2 : mine); ++q) {  // queues 1 ..: worker 0's too
    busy.push_back(std::make_unique<worker_actor>());
    busy.back()->done = &done;
  }
  const std::uint64_t per_actor = tact::test::scaled(400);
  const std::uint64_t total = per_actor * busy.size();
  stuck.done = &done;
  stuck.until = total;
  std::vector<std::vector<job>> jobs(busy.size());
  for (auto& j : jobs) j.resize(per_actor);

  system.await_quiescence();
  if (idle_first) std::this_thread::sleep_for(std::chrono::milliseconds{150});
  hold h;
  stuck | h;
  for (std::uint64_t s = 0; s < per_actor; ++s)
    for (std::size_t a = 0; a < busy.size(); ++a) {
      jobs[a][s].seq = s;
      *busy[a] | jobs[a][s];
    }
  // Returns only once the blocker has returned, which it does only after
  // every job ran elsewhere while worker 0 was stuck in it.
  system.await_quiescence();

  CHECK(done.load() == total);
  for (const auto& a : busy) {
    CHECK(a->received == per_actor);
    CHECK(a->out_of_order == 0);
    CHECK_FALSE(a->overlapped.load());
  }
  const tact::worker_stats stats = system.stats().total;
  CHECK(stats.steals >= 1);
  CHECK(stats.messages_processed == total + 1);

  stuck | tact::delete_msg;
  for (auto& a : busy) *a | tact::finished_msg;
  system.stop();
}

TEST_CASE("steal statistics add up, and policy none never steals") {
  const auto policy = GENERATE(tact::steal_policy::none, tact::steal_policy::random,
                               tact::steal_policy::longest_victim, tact::steal_policy::locality);
  CAPTURE(name(policy));
  tact::actor_system system{{.workers = 4, .steal = policy}};
  std::atomic<std::uint64_t> done{0};
  const std::uint32_t mine = worker0_queues(system);
  // Every actor on worker 0's queues: the other three can only steal.
  std::vector<std::unique_ptr<worker_actor>> actors;
  for (std::uint32_t i = 0; i < system.queues(); ++i) {
    auto a = std::make_unique<worker_actor>();
    a->done = &done;
    actors.push_back(std::move(a));
  }
  const std::uint64_t per_actor = tact::test::scaled(300);
  std::vector<std::vector<job>> jobs(mine);
  for (auto& j : jobs) j.resize(per_actor);
  for (std::uint64_t s = 0; s < per_actor; ++s)
    for (std::uint32_t a = 0; a < mine; ++a) {
      jobs[a][s].seq = s;
      *actors[a] | jobs[a][s];
    }
  system.await_quiescence();
  CHECK(done.load() == per_actor * mine);

  const tact::system_stats stats = system.stats();
  for (const tact::worker_stats& w : stats.workers) {
    CHECK(w.steal_attempts == w.steal_no_candidate + w.steal_failed_swaps + w.steals);
    CHECK(w.messages_stolen >= w.steals);  // only queues with mail are taken
  }
  if (policy == tact::steal_policy::none) {
    CHECK(stats.total.steal_attempts == 0);
    CHECK(stats.total.steals == 0);
    CHECK(stats.workers[0].messages_processed == per_actor * mine);
  }
  for (auto& a : actors) *a | tact::finished_msg;
  system.stop();
}

namespace {
struct again : tact::message {};

// Re-sends one message to itself `left` times.
struct loner : tact::actor {
  std::uint64_t left = 0;
  tact::allocation receive(again& m) {
    if (--left > 0) *this | m;
    return Nodelete;
  }
};
}  // namespace

TEST_CASE("a worker's only busy queue is not bounced between workers") {
  const auto policy = GENERATE(tact::steal_policy::random, tact::steal_policy::longest_victim,
                               tact::steal_policy::locality);
  CAPTURE(name(policy));
  // Through the mailbox every time, so that between two gulps the queue
  // has mail and nobody processing it: the moment a thief could take it.
  tact::actor_system system{{.workers = 2, .local_batch = 0, .steal = policy}};
  loner l;
  const std::uint64_t messages = tact::test::scaled(200'000);
  l.left = messages;
  again m;
  l | m;
  system.await_quiescence();
  CHECK(l.left == 0);
  // Its worker runs it, and a thief takes it only when that worker stops
  // sweeping for a while (preempted by the OS, on a loaded machine): a
  // handful of times at most, never once per message or so.
  CHECK(system.stats().total.steals * 100 <= messages);
  l | tact::finished_msg;
  system.stop();
}

namespace {

struct prepare : tact::message {};
struct ran : tact::message {};

// Notes the thread each message runs on.
struct witness : tact::actor {
  std::vector<pid_t> threads;
  std::atomic<std::size_t> received{0};
  tact::allocation receive(ran&) {
    threads.push_back(tact::test::standing_thread::this_thread_id());
    received.store(threads.size(), std::memory_order_release);
    return Nodelete;
  }
};

// Creates the witness on the worker that receives `prepare`, and notes
// that worker's thread. A behaviour's new actors take its worker's own
// queues in turn: the first (`spare`) lands on the queue whose batch this
// is, the witness on the next, which nobody is processing.
struct creator : tact::actor {
  std::unique_ptr<witness> spare, created;
  std::atomic<pid_t> thread{0};
  tact::allocation receive(prepare&) {
    spare = std::make_unique<witness>();
    created = std::make_unique<witness>();
    thread.store(tact::test::standing_thread::this_thread_id(), std::memory_order_release);
    return Nodelete;
  }
};

// A system of two workers, one of which (worker 0, whose thread is
// `stopped`) stands still in a signal handler between stop() and release(),
// as a thread the OS does not run. Both idle long before they park: the
// stopped one is then not parked (a post would wake a parked worker,
// which another watches for), and the other keeps looking, as a worker
// does between bursts. `witness` is on the stopped worker, on a queue
// nobody processes. The governor is off: it would stand the busy worker
// down now and then (its spinner is message-bound work), and the busy
// worker back from a rest may find an empty sweep and steal the mail as
// an idle worker does, before any rescue.
struct stopped_worker {
  tact::test::standing_thread standing;
  tact::actor_system system{{.workers = 2, .idle_yields = 200'000, .adapt_every = {}}};
  creator c;  // queue 0: worker 0's
  witness* w = nullptr;
  pid_t stopped = 0;

  stopped_worker() {
    prepare p;
    c | p;
    while (c.thread.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    w = c.created.get();
    stopped = c.thread.load();
  }
  ~stopped_worker() {
    standing.release();
    system.await_quiescence();
    c | tact::finished_msg;
    *w | tact::finished_msg;
    *c.spare | tact::finished_msg;
    system.stop();
  }
  void stop() { standing.stop(stopped); }
  void release() { standing.release(); }
  // Messages the witness received on another thread than the stopped one.
  std::ptrdiff_t ran_elsewhere() const {
    return std::count_if(w->threads.begin(), w->threads.end(), [&](pid_t t) { return t != stopped; });
  }
};

struct spin : tact::message {};

// Keeps its worker busy, one message to itself after another, until the
// witness has all its mail or `most` messages have run: its worker never
// has an empty sweep, so it never steals as an idle worker does.
struct spinner : tact::actor {
  const witness* watched = nullptr;
  std::size_t expected = 0;
  std::uint64_t most = 0;
  std::uint64_t spins = 0;
  std::atomic<bool> started{false}, over{false};
  bool witness_done = false;  // when it stopped: the witness had its mail
  spin next;
  tact::allocation receive(spin&) {
    started.store(true, std::memory_order_release);
    witness_done = watched->received.load(std::memory_order_acquire) == expected;
    if (witness_done || ++spins == most) {
      over.store(true, std::memory_order_release);
      return Nodelete;
    }
    *this | next;
    return Nodelete;
  }
};

}  // namespace

#if !defined(__SANITIZE_THREAD__)  // see standing_thread.hpp
TEST_CASE("mail on a worker whose thread does not run is taken by an idle worker") {
  stopped_worker f;
  f.stop();
  const std::size_t count = 100;
  std::vector<ran> mail(count);
  for (ran& m : mail) *f.w | m;
  while (f.w->received.load(std::memory_order_acquire) < count) std::this_thread::yield();
  f.release();
  CHECK(f.ran_elsewhere() == static_cast<std::ptrdiff_t>(count));
}

TEST_CASE("mail on a worker whose thread does not run is taken by a busy worker") {
  stopped_worker f;
  auto& s = f.system.spawn_at<spinner>(tact::on_worker(1));
  const std::size_t count = 100;
  s.watched = f.w;
  s.expected = count;
  // A count, not a time: far more than the few milliseconds a rescue
  // takes, at any speed.
  s.most = 50'000'000;
  f.stop();
  // Busy first: an idle worker would take the mail as a thief does.
  s | s.next;
  while (!s.started.load(std::memory_order_acquire)) std::this_thread::yield();
  std::vector<ran> mail(count);
  for (ran& m : mail) *f.w | m;
  while (!s.over.load(std::memory_order_acquire)) std::this_thread::yield();
  f.release();
  f.system.await_quiescence();

  // All of it ran while its worker stood still and the other was busy.
  CHECK(s.witness_done);
  CHECK(f.ran_elsewhere() == static_cast<std::ptrdiff_t>(count));
  CHECK(f.system.stats().total.rescues >= 1);
  s | tact::delete_msg;
}

// Three workers, two running: worker 2 rests, and worker 0 sweeps its
// queues. Worker 0's thread stands still; worker 1 is busy. The resting
// worker's mail is stranded behind worker 0 as its own would be, and is
// rescued the same way.
TEST_CASE("mail on a resting worker's queues is taken by a busy worker when their coverer stands still") {
  tact::test::standing_thread standing;
  // Epochs far longer than the test: the governor keeps the count set here.
  tact::actor_system system{
      {.workers = 3, .idle_yields = 200'000, .adapt_every = std::chrono::hours{1}}};
  auto& w = system.spawn_at<witness>(tact::on_worker(2));
  tact::detail::executor_of(system).set_active(2);
  while (!system.stats().load[2].resting) std::this_thread::yield();
  // Worker 0 covers worker 2 now: its thread is the one to stop.
  std::vector<tact::actor*> spawned{&w};
  const pid_t stopped = tact::test::thread_of_worker(
      system, 0, [] { return tact::on_worker(0); }, spawned);

  standing.stop(stopped);
  auto& s = system.spawn_at<spinner>(tact::on_worker(1));
  const std::size_t count = 100;
  s.watched = &w;
  s.expected = count;
  s.most = 50'000'000;  // a count, not a time, as above
  s | s.next;
  while (!s.started.load(std::memory_order_acquire)) std::this_thread::yield();
  std::vector<ran> mail(count);
  for (ran& m : mail) w | m;
  while (!s.over.load(std::memory_order_acquire)) std::this_thread::yield();
  standing.release();
  system.await_quiescence();

  CHECK(s.witness_done);
  CHECK(std::count(w.threads.begin(), w.threads.end(), stopped) == 0);
  CHECK(system.stats().total.rescues >= 1);
  spawned.push_back(&s);
  for (tact::actor* a : spawned) *a | tact::delete_msg;
  system.stop();
}
#endif
