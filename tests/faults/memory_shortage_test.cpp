// Running out of memory where the engine cannot fail: after a commit has
// begun (its sends, the epochs that reclaim the behaviour it replaced, the
// batch its on_commit actions wait in), on the timer thread (its heap, the
// firing's post), and while a waiting actor's messages are set aside.
// Every allocation off the test thread fails ("starving") except those the
// program's own handlers make, which may fail cleanly and are tested in
// allocation_failure_test. The engine must neither end the process nor
// lose or reorder a message: the work waits (counted in memory_waits) and
// goes on once memory is back.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>

#include <tact/tact.hpp>
#include <tact/timer.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/replaced_allocation.hpp"
#include "support/test_support.hpp"

namespace {

std::atomic<bool> starving{false};
// Allocations that may go on while starving: the test thread's, and those
// of the program's handlers.
constinit thread_local bool exempt = false;

}  // namespace

bool tact::test::allocation_fails() noexcept {
  return !exempt && starving.load(std::memory_order_relaxed);
}

namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using tact::test::eventually;

// A timeout that is a failure, never a wait that passes.
constexpr auto patient = 60s;

// The program's code: its allocations do not fail.
class in_program : tact::test::flag_scope {
 public:
  in_program() noexcept : flag_scope{exempt} {}
};

// Starving from construction until lifted (or the end of the scope).
class starvation {
 public:
  starvation() noexcept { starving.store(true); }
  ~starvation() { lift(); }
  starvation(const starvation&) = delete;
  starvation& operator=(const starvation&) = delete;
  void lift() noexcept { starving.store(false); }
};

std::uint64_t memory_waits(tact::actor_system& system) { return system.stats().total.memory_waits; }

// A small floor, so that a queue must grow within a few messages.
tact::system_config small_queues(std::uint32_t workers) {
  return {
      .workers = workers, .copy_queue_floor = 2, .on_diagnostic = [](const tact::diagnostic&) {}};
}

// What a serialized sink received, in order, in storage made beforehand.
template <std::size_t N>
struct received {
  std::array<int, N> values{};
  std::atomic<std::size_t> count{0};

  void add(int v) noexcept { values[count.fetch_add(1, std::memory_order_relaxed)] = v; }
  bool all_in_order() const noexcept {
    if (count.load() != N) return false;
    for (std::size_t i = 0; i < N; ++i)
      if (values[i] != static_cast<int>(i)) return false;
    return true;
  }
};

struct go {
  int from;
  int count;
};

}  // namespace

TEST_CASE("a commit whose sends find no memory keeps them, in order, until memory is back") {
  exempt = true;
  // Two workers: the sink holds one, in a first message sent before the
  // shortage, until the test has seen sends wait; the producer commits on
  // the other. A sink left to run would take the waiting sends a few at a
  // time as its small queue empties, and could receive them all before
  // the test looks.
  tact::actor_system system{small_queues(2)};
  static received<300> seen;
  static std::atomic<bool> held{true};
  static std::atomic<bool> holding{false};
  seen.count = 0;
  held = true;
  holding = false;
  struct release {
    ~release() { held = false; }
  } on_failure;  // before the system's end, which waits for the sink
  const tx::actor_ref sink = tx::spawn(system, {[](int v) {
                                         in_program program;
                                         if (v >= 0) {
                                           seen.add(v);
                                           return;
                                         }
                                         holding = true;
                                         while (held.load()) std::this_thread::sleep_for(1ms);
                                       }},
                                       tx::mode::serialized);
  tx::send(sink, -1);
  REQUIRE(eventually([] { return holding.load(); }));
  // An actor that sends a run of numbers from each message. Serialized, so
  // that its messages commit in the order they were sent: a parallel
  // actor's messages may run at once on both workers, and commit in
  // either order.
  struct producer {
    static tx::behaviour at(int commits, tx::actor_ref out) {
      return {[commits, out](go g) {
        in_program program;
        for (int i = 0; i < g.count; ++i) tx::send(out, g.from + i);
        tx::become(at(commits + 1, out));
      }};
    }
  };
  const tx::actor_ref source = tx::spawn(system, producer::at(0, sink), tx::mode::serialized);
  starvation starved;
  for (int from = 0; from < 300; from += 100) tx::send(source, go{from, 100});
  // The sink's queue cannot grow on a worker: the sends wait.
  REQUIRE(eventually([&] { return memory_waits(system) > 0; }));
  starved.lift();
  held = false;
  system.await_quiescence();
  CHECK(seen.all_in_order());
  CHECK(system.stats().total.tx_commits == 1 + 3 + 300);
  CHECK(tact::test::conservation_of(system));
}

TEST_CASE("becomes and on_commit actions need no memory once their handler returned") {
  exempt = true;
  tact::actor_system system{small_queues(2)};
  static std::atomic<int> actions{0};
  actions = 0;
  struct counter {
    static tx::behaviour at(int n) {
      return {[n](int) {
                in_program program;
                tx::on_commit([] { actions.fetch_add(1, std::memory_order_relaxed); });
                tx::become(at(n + 1));
              },
              [n](const tx::actor_ref& customer, bool) {
                in_program program;
                tx::send(customer, n);
              }};
    }
  };
  const tx::actor_ref c = tx::spawn(system, counter::at(0));
  {
    // Each commit retires the behaviour it replaced and queues its action,
    // on a worker that can get no memory.
    starvation starved;
    for (int i = 0; i < 200; ++i) tx::send(c, i);
    REQUIRE(eventually([&] { return actions.load() == 200; }));
  }
  system.await_quiescence();
  const auto n = tx::ask<int>(system, c, patient, true);
  REQUIRE(n);
  CHECK(*n == 200);
  CHECK(memory_waits(system) == 0);  // none of it needed any
}

namespace {

struct tick : tact::message {
  int id = 0;
};

struct tick_counter : tact::actor {
  std::array<std::atomic<int>, 64> seen{};
  std::atomic<int> total{0};
  tact::allocation receive(tick& t) {
    seen[static_cast<std::size_t>(t.id)].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a timer whose message cannot be queued fires once memory is back, never lost") {
  exempt = true;
  tact::actor_system system{small_queues(1)};
  tick_counter& target = system.spawn<tick_counter>();
  std::array<tick, 64> ticks{};
  starvation starved;
  for (int i = 0; i < 64; ++i) {
    ticks[static_cast<std::size_t>(i)].id = i;
    tact::send_after(std::chrono::milliseconds{i % 4}, target, ticks[static_cast<std::size_t>(i)]);
  }
  // The timer thread takes them into its heap (which needs no memory) and
  // finds the target's queue unable to grow.
  REQUIRE(eventually([&] { return memory_waits(system) > 0; }));
  starved.lift();
  REQUIRE(eventually([&] { return target.total.load(std::memory_order_acquire) == 64; }));
  system.await_quiescence();
  for (const auto& n : target.seen) CHECK(n.load() == 1);
  target | tact::delete_msg;
  system.await_quiescence();
}

namespace {

struct question : tact::request<int> {};
struct start : tact::message {};
struct note : tact::message {
  int seq = 0;
};

// Answers once told to, holding its worker meanwhile (a classic reply
// comes from the receive).
struct slow_peer : tact::actor {
  std::atomic<bool> asked{false};
  std::atomic<bool> answer{false};
  tact::allocation receive(question& q) {
    asked.store(true, std::memory_order_release);
    while (!answer.load(std::memory_order_acquire)) std::this_thread::yield();
    q.reply(42);
    return Nodelete;
  }
};

// Asks the peer (its behaviour waits, its queue held) while notes arrive.
struct asker : tact::actor {
  slow_peer* peer = nullptr;
  std::atomic<int> answer{0};
  std::array<int, 40> notes{};
  std::atomic<int> noted{0};
  int notes_before_answer = -1;
  tact::allocation receive(start&) {
    const auto r = tact::ask(*peer, question{}, patient);
    notes_before_answer = noted.load();
    answer.store(r ? *r : -1, std::memory_order_release);
    return Nodelete;
  }
  tact::allocation receive(note& n) {
    notes[static_cast<std::size_t>(noted.load())] = n.seq;
    noted.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("messages for a waiting actor wait in order when there is no memory to set them aside") {
  exempt = true;
  // Two workers, a queue each: the asker on the first, the peer, which
  // holds the second worker until it answers, on the second. No stealing:
  // the first worker must not take the peer's question and block in it.
  tact::actor_system system{{.workers = 2,
                             .queues = 2,
                             .copy_queue_floor = 2,
                             .steal = tact::steal_policy::none,
                             .on_diagnostic = [](const tact::diagnostic&) {}}};
  asker& a = system.spawn<asker>();
  slow_peer& p = system.spawn<slow_peer>();
  a.peer = &p;
  start s;
  a | s;
  // The question reaches the peer before the asker's behaviour has
  // suspended (which allocates): wait for both.
  REQUIRE(eventually([&] {
    return p.asked.load(std::memory_order_acquire) && system.stats().total.suspensions == 1;
  }));
  std::array<note, 40> notes{};
  {
    starvation starved;
    for (int i = 0; i < 40; ++i) {
      notes[static_cast<std::size_t>(i)].seq = i;
      a | notes[static_cast<std::size_t>(i)];
    }
    // The worker holding the asker's queue takes the notes in, and finds
    // no memory to set them aside behind the waiting behaviour.
    REQUIRE(eventually([&] { return memory_waits(system) > 0; }));
  }
  p.answer.store(true, std::memory_order_release);
  REQUIRE(eventually([&] { return a.noted.load(std::memory_order_acquire) == 40; }));
  system.await_quiescence();
  CHECK(a.answer.load() == 42);
  CHECK(a.notes_before_answer == 0);  // one message at a time: none ran during the ask
  for (int i = 0; i < 40; ++i) CHECK(a.notes[static_cast<std::size_t>(i)] == i);
  a | tact::delete_msg;
  p | tact::delete_msg;
  system.await_quiescence();
}

namespace {

struct doomed : tact::message {};

// Fails every message as an allocation of its own would, out of memory.
struct failing : tact::actor {
  std::atomic<int> tried{0};
  tact::allocation receive(doomed&) {
    tried.fetch_add(1, std::memory_order_release);
    throw std::bad_alloc{};
  }
};

}  // namespace

TEST_CASE("a behaviour that runs out of memory is reported if the report finds memory, else not") {
  exempt = true;
  // The default handler, which itself needs memory to print.
  tact::actor_system system{{.workers = 1}};
  failing& f = system.spawn<failing>();
  std::array<doomed, 3> messages{};
  {
    starvation starved;
    for (doomed& m : messages) f | m;
    REQUIRE(eventually([&] { return f.tried.load(std::memory_order_acquire) == 3; }));
    system.await_quiescence();
  }
  CHECK(tact::test::conservation_of(system));  // each failed message counted processed once
  f | tact::delete_msg;
  system.await_quiescence();
}

namespace {

struct numbered : tact::message {
  int seq = 0;
};

struct numbers_sink : tact::actor {
  std::array<int, 100> seen{};
  std::atomic<int> count{0};
  tact::allocation receive(numbered& m) {
    seen[static_cast<std::size_t>(count.load(std::memory_order_relaxed))] = m.seq;
    count.fetch_add(1, std::memory_order_release);
    return Nodelete;
  }
};

struct burst {
  bool starve_after = false;  // memory runs out once the sends are made
};

// Sends a burst to the sink from a behaviour: the sends are held in its
// worker's outbox until the batch ends (fewer than the 128 it holds,
// so that all of them are posted then).
struct burster : tact::actor {
  numbers_sink* sink = nullptr;
  std::array<numbered, 100>* out = nullptr;
  std::atomic<int> sent{0};
  std::atomic<bool> threw{false};
  tact::allocation receive(tact::payload<burst>& b) {
    try {
      for (numbered& m : *out) {
        *sink | m;
        sent.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (const std::bad_alloc&) {
      threw.store(true, std::memory_order_release);
    }
    if (b.starve_after) starving.store(true);
    return Nodelete;
  }
};

}  // namespace

// One worker, a burster and its sink on two of its queues: the sends take
// the sink's mailbox, which must grow (floor 2) as the batch ends.
struct burst_setup {
  const bool exempted = exempt = true;  // the test thread's allocations never fail
  tact::actor_system system{{.workers = 1,
                             .queues = 2,
                             .copy_queue_floor = 2,
                             .on_diagnostic = [](const tact::diagnostic&) {}}};
  numbers_sink& sink = system.spawn<numbers_sink>();
  burster& b = system.spawn<burster>();
  std::array<numbered, 100> out{};

  burst_setup() {
    for (int i = 0; i < 100; ++i) out[static_cast<std::size_t>(i)].seq = i;
    b.sink = &sink;
    b.out = &out;
  }
  ~burst_setup() {
    b | tact::delete_msg;
    sink | tact::delete_msg;
    system.await_quiescence();
  }
};

TEST_CASE("sends held until the batch ends are queued even if their mailbox then cannot grow") {
  burst_setup s;
  tact::payload<burst> go{burst{.starve_after = true}};
  {
    starvation starved;
    starved.lift();  // the behaviour starts the starvation itself, after its sends
    s.b | go;
    // The mailbox cannot grow once the behaviour returns: each send holds
    // a spare chunk, taken as the outbox is posted.
    REQUIRE(eventually([&] { return s.sink.count.load(std::memory_order_acquire) == 100; }));
  }
  CHECK_FALSE(s.b.threw.load());
  bool in_order = true;
  for (int i = 0; i < 100; ++i)
    in_order = in_order && s.sink.seen[static_cast<std::size_t>(i)] == i;
  CHECK(in_order);
  s.system.await_quiescence();
  CHECK(tact::test::conservation_of(s.system));
}

TEST_CASE("a held send that finds no memory for its spare chunk throws, and nothing is sent") {
  burst_setup s;
  tact::payload<burst> go{};
  {
    starvation starved;
    s.b | go;
    REQUIRE(eventually([&] { return s.b.threw.load(std::memory_order_acquire); }));
  }
  s.system.await_quiescence();
  // The worker is new: its outbox has no spare chunk yet, so the first
  // send already needs memory.
  CHECK(s.b.sent.load() == 0);
  CHECK(s.sink.count.load() == 0);
  CHECK(tact::test::conservation_of(s.system));
}
