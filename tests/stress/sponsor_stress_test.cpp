// Bounded stress of what runs beside the pool, with more workers than
// cores: actors bound to sponsors with threads of their own get every
// message exactly once and per sender in order while pool actors and
// other threads send to them, and await_quiescence() returns only once
// the sponsors have run what was sent to them; stop() ends the asks that
// threads outside the pool still wait on, every one of them.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
using tact::test::sequenced;

struct item : sequenced {
  item(std::uint64_t from, std::uint64_t number) : sequenced{from, number} {
    set_allocation(tact::allocation::Delete);
  }
};

// Bound to a sponsor: checks each stream's order.
struct bound_sink : tact::actor {
  tact::test::fifo_check order;
  std::atomic<std::uint64_t> received{0};
  tact::allocation receive(item& m) {
    order.accept(m);
    received.fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }
};

struct hop : sequenced {
  hop(std::uint64_t from, std::uint64_t number, bound_sink* to) : sequenced{from, number}, to{to} {
    set_allocation(tact::allocation::Delete);
  }
  bound_sink* to;
};

// A pool actor that passes each hop on to its sink: one fixed path per
// stream, so the stream's order holds end to end.
struct relay : tact::actor {
  tact::allocation receive(hop& h) {
    *h.to | *new item{h.sender, h.seq};
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("sponsored actors under oversubscribed load: exactly once, in order, waited for") {
  tact::actor_system system{{.workers = 8}};
  constexpr std::size_t sponsors = 3;
  constexpr std::size_t relays = 16;
  constexpr std::uint64_t threads = 4;
  constexpr std::uint64_t rounds = 40;
  constexpr std::uint64_t via_pool = 150;  // per thread, sink and round
  constexpr std::uint64_t direct = 50;
  std::vector<std::unique_ptr<tact::dedicated_sponsor>> io;
  std::vector<bound_sink*> sinks;
  for (std::size_t k = 0; k < sponsors; ++k) {
    io.push_back(std::make_unique<tact::dedicated_sponsor>(system));
    sinks.push_back(&io.back()->spawn<bound_sink>());
  }
  std::vector<relay*> pool;
  for (std::size_t r = 0; r < relays; ++r) pool.push_back(&system.spawn<relay>());
  // Stream t: thread t through its fixed relay; stream threads + t: thread t directly.
  std::vector<std::uint64_t> next_seq(2 * threads * sponsors, 0);
  std::uint64_t late = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    std::vector<std::thread> senders;
    for (std::uint64_t t = 0; t < threads; ++t)
      senders.emplace_back([&, t] {
        for (std::size_t k = 0; k < sponsors; ++k) {
          relay& path = *pool[(t * sponsors + k) % relays];
          std::uint64_t& pooled = next_seq[(t * sponsors + k) * 2];
          std::uint64_t& straight = next_seq[(t * sponsors + k) * 2 + 1];
          for (std::uint64_t i = 0; i < via_pool; ++i) {
            path | *new hop{t, pooled++, sinks[k]};
            if (i % (via_pool / direct) == 0) *sinks[k] | *new item{threads + t, straight++};
          }
        }
      });
    for (std::thread& s : senders) s.join();
    system.await_quiescence();
    for (bound_sink* s : sinks)
      if (s->received.load() != (round + 1) * threads * (via_pool + direct)) ++late;
  }
  CHECK(late == 0);  // quiescence waited for the sponsors' mail every round
  for (bound_sink* s : sinks) {
    CHECK(s->order.clean());
    CHECK(s->order.received() == rounds * threads * (via_pool + direct));
    *s | tact::delete_msg;
  }
  for (relay* r : pool) *r | tact::delete_msg;
  system.await_quiescence();
  io.clear();
  system.stop();
  CHECK(tact::test::conservation_of(system));
}

namespace {

struct question : tact::request<int> {
  explicit question(bool keep) : keep{keep} {}
  bool keep;
};

// Answers some questions and keeps the rest, unanswered, until the end.
struct oracle : tact::actor {
  explicit oracle(tact::actor_system& system) : tact::actor{system} {}
  std::vector<question*> kept;
  std::atomic<std::uint64_t> kept_count{0};
  tact::allocation receive(question& q) {
    if (!q.keep) {
      q.reply(1);
      return Nodelete;
    }
    q.set_allocation(tact::allocation::Nodelete);
    kept.push_back(&q);
    kept_count.fetch_add(1);
    return Nodelete;
  }
  ~oracle() override {
    for (question* q : kept) delete q;
  }
};

}  // namespace

TEST_CASE("stop() ends every ask waited on from outside the pool, under oversubscribed load") {
  constexpr int systems = 10;
  constexpr int askers = 6;
  constexpr int answered_first = 20;
  for (int round = 0; round < systems; ++round) {
    tact::test::diagnostics_log log;
    tact::actor_system system{{.workers = 8, .on_diagnostic = log.handler()}};
    std::vector<std::unique_ptr<oracle>> oracles;
    for (int a = 0; a < askers; ++a) oracles.push_back(std::make_unique<oracle>(system));
    std::atomic<int> answered{0};
    std::atomic<int> ended_no_reply{0};
    std::atomic<int> other{0};
    std::vector<std::thread> threads;
    for (int a = 0; a < askers; ++a)
      threads.emplace_back([&, a] {
        for (int i = 0; i < answered_first; ++i)
          if (tact::ask(*oracles[a], question{false}, 60s).has_value()) ++answered;
        const auto last = tact::ask(*oracles[a], question{true}, std::chrono::hours{1});
        (last.has_value() || last.error() != tact::ask_error::no_reply ? other : ended_no_reply)++;
      });
    for (auto& o : oracles)
      while (o->kept_count.load() == 0) std::this_thread::yield();
    for (auto& o : oracles) *o | tact::finished_msg;
    system.stop();  // ends every ask still waited on: no_reply
    for (std::thread& t : threads) t.join();
    CHECK(ended_no_reply.load() == askers);
    CHECK(answered.load() == askers * answered_first);
    CHECK(other.load() == 0);
  }
}
