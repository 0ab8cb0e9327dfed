#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

// Bounded mailboxes must never deadlock (docs/flow_control.md): actors
// that flood each other in a cycle, each waiting for room in the next,
// and a chain of bounded actors each waiting for the next, all finish,
// with every message received once and in its sender's order. Run with
// more workers than cores, and under ThreadSanitizer.
namespace {

struct hop : tact::message {
  hop(std::uint64_t seq, std::uint32_t left)
      : tact::message{tact::allocation::Delete}, seq{seq}, left{left} {}
  std::uint64_t seq;   // the sender's count of what it sent to its successor
  std::uint32_t left;  // hops still to go
};
struct start : tact::message {};

// One actor of a ring: on start it sends `burst` hops to its successor in
// one behaviour; a hop with hops left goes on to the successor. All it
// receives comes from its predecessor, numbered 0, 1, 2...
struct ring_member : tact::actor {
  ring_member(tact::actor_system& system, std::uint32_t bound, std::uint64_t burst,
              std::uint32_t hops)
      : actor{system}, burst_{burst}, hops_{hops} {
    bound_mailbox(bound);
  }

  tact::allocation receive(start&) {
    for (std::uint64_t i = 0; i < burst_; ++i) pass(hops_);
    return Nodelete;
  }
  tact::allocation receive(hop& m) {
    if (m.seq != received) ++out_of_order;
    ++received;
    if (m.left > 0) pass(m.left - 1);
    return Nodelete;
  }
  void pass(std::uint32_t left) { tact::send_new<hop>(*next, sent++, left); }

  ring_member* next = nullptr;
  const std::uint64_t burst_;
  const std::uint32_t hops_;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

}  // namespace

TEST_CASE("actors flooding each other in a cycle through bounded mailboxes all finish",
          "[stress][flow_control]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint32_t members = GENERATE(2u, 5u);
  constexpr std::uint32_t bound = 8;
  constexpr std::uint64_t burst = 2'000;
  constexpr std::uint32_t hops = 3;
  INFO(workers << " workers, a ring of " << members);
  for (int round = 0; round < 3; ++round) {
    tact::actor_system system{{.workers = workers}};
    std::vector<std::unique_ptr<ring_member>> ring;
    for (std::uint32_t i = 0; i < members; ++i)
      ring.push_back(std::make_unique<ring_member>(system, bound, burst, hops));
    for (std::uint32_t i = 0; i < members; ++i) ring[i]->next = ring[(i + 1) % members].get();
    start go;
    go.allow_unsent();
    for (auto& m : ring) *m | go;
    system.await_quiescence();
    std::uint64_t received = 0;
    for (std::uint32_t i = 0; i < members; ++i) {
      CHECK(ring[i]->out_of_order == 0);
      // Exactly what its predecessor sent it.
      CHECK(ring[i]->received == ring[(i + members - 1) % members]->sent);
      received += ring[i]->received;
    }
    // Every member's burst travels hops + 1 legs.
    CHECK(received == members * burst * (hops + 1));
    const tact::worker_stats s = system.stats().total;
    CHECK(s.messages_sent == s.messages_processed);
    CHECK(s.sends_dropped == 0);
    if (workers == 1) CHECK(s.sends_waited > 0);
    for (auto& m : ring) *m | tact::finished_msg;
    system.stop();
  }
}

namespace {

// One link of a chain: passes every item on, in order.
struct chain_link : tact::actor {
  chain_link(tact::actor_system& system, std::uint32_t bound, chain_link* to) : actor{system}, next{to} {
    if (bound != 0) bound_mailbox(bound);
  }
  tact::allocation receive(start&) {
    for (std::uint64_t i = 0; i < burst; ++i) tact::send_new<hop>(*next, i, 0);
    return Nodelete;
  }
  tact::allocation receive(hop& m) {
    if (m.seq != received) ++out_of_order;
    ++received;
    if (next != nullptr) tact::send_new<hop>(*next, m.seq, 0);
    return Nodelete;
  }

  chain_link* const next;
  std::uint64_t burst = 0;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

}  // namespace

TEST_CASE("a chain of ten bounded actors passes a flood through in order",
          "[stress][flow_control]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr std::uint64_t burst = 20'000;
  INFO(workers << " workers");
  for (int round = 0; round < 3; ++round) {
    tact::actor_system system{{.workers = workers}};
    // Built from the end: each chain_link knows the next.
    std::vector<std::unique_ptr<chain_link>> chain;
    chain.push_back(std::make_unique<chain_link>(system, 16, nullptr));
    for (int i = 0; i < 9; ++i)
      chain.push_back(std::make_unique<chain_link>(system, 16, chain.back().get()));
    chain_link source{system, 0, chain.back().get()};
    source.burst = burst;
    start go;
    source | go;
    system.await_quiescence();
    for (auto& l : chain) {
      CHECK(l->received == burst);
      CHECK(l->out_of_order == 0);
    }
    const tact::worker_stats s = system.stats().total;
    CHECK(s.messages_sent == s.messages_processed);
    if (workers == 1) CHECK(s.sends_waited > 0);
    source | tact::finished_msg;
    for (auto& l : chain) *l | tact::finished_msg;
    system.stop();
  }
}

namespace {

namespace tx = tact::tx;

// Two bounded transactional actors flooding each other a step at a time,
// forwarding what they receive: each commit that finds the other full
// mutes its actor, and both fill up.
struct tx_hop {
  std::uint64_t seq;
  std::uint32_t left;
};
struct tx_more {
  std::uint64_t left;
};
struct tx_meet {
  tx::actor_ref peer;
};
struct tx_part {};

// What one member's handlers count: serialized, so one handler at a time.
struct tx_member_state {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
};

constexpr std::uint64_t tx_burst = 3'000;
constexpr std::uint64_t tx_step = 32;
constexpr std::uint32_t tx_hops = 2;

void tx_stage(const tx::actor_ref& peer, tx_member_state& me, std::uint64_t left) {
  const std::uint64_t now = std::min(left, tx_step);
  for (std::uint64_t i = 0; i < now; ++i) tx::send(peer, tx_hop{me.sent++, tx_hops});
  if (now < left) tx::send(tx::self(), tx_more{left - now});
}

tx::behaviour tx_waiting(tx_member_state& me);

tx::behaviour tx_flooding(const tx::actor_ref& peer, tx_member_state& me) {
  return {
      [peer, &me](tx_more m) { tx_stage(peer, me, m.left); },
      // Lets the peer go: two behaviours holding each other's actor would
      // keep both alive for good.
      [&me](tx_part) { tx::become(tx_waiting(me)); },
      [peer, &me](tx_hop h) {
        if (h.seq != me.received) ++me.out_of_order;
        ++me.received;
        if (h.left > 0) tx::send(peer, tx_hop{me.sent++, h.left - 1});
      },
  };
}

// Until it knows its peer; the burst starts with a tx_more once both do.
tx::behaviour tx_waiting(tx_member_state& me) {
  return {[&me](const tx_meet& m) { tx::become(tx_flooding(m.peer, me)); }};
}

}  // namespace

TEST_CASE("bounded transactional actors flooding each other all finish",
          "[stress][flow_control]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  INFO(workers << " workers");
  for (int round = 0; round < 3; ++round) {
    tact::actor_system system{{.workers = workers}};
    tx_member_state a_state;
    tx_member_state b_state;
    {
      const tx::actor_ref a = tx::spawn(system, tx_waiting(a_state), tx::bounded{16});
      const tx::actor_ref b = tx::spawn(system, tx_waiting(b_state), tx::bounded{16});
      tx::send(a, tx_meet{b});
      tx::send(b, tx_meet{a});
      system.await_quiescence();
      tx::send(a, tx_more{tx_burst});
      tx::send(b, tx_more{tx_burst});
      system.await_quiescence();
      tx::send(a, tx_part{});
      tx::send(b, tx_part{});
      system.await_quiescence();
    }
    CHECK(a_state.out_of_order == 0);
    CHECK(b_state.out_of_order == 0);
    CHECK(a_state.received == b_state.sent);
    CHECK(b_state.received == a_state.sent);
    CHECK(a_state.received + b_state.received == 2 * tx_burst * (tx_hops + 1));
    const tact::worker_stats s = system.stats().total;
    CHECK(s.tx_rollbacks == 0);
    CHECK(s.tx_unmatched == 0);
    if (workers == 1) CHECK(s.sends_waited > 0);
    system.stop();
  }
}

namespace {

// Parallel clients hammering one counter, as tx_counter does: each step
// of a client's chain sends the counter one increment and itself the next
// step. The counter is bounded from its creation (tx::bounded), or starts
// parallel and collides until collisions serialize it, its mailbox bounded
// from then on (collision_bound). Either way clients that commit to it
// full are muted, one invocation at a time, and a client's last step may
// be muted after the last reference to the client is gone. Each increment
// carries its client and step, tallied once its commit is done, so that a
// loss or a duplicate shows in a client's count or in the sum of its
// steps.
constexpr std::uint32_t hammer_clients = 8;
constexpr std::uint64_t hammer_steps = 2'000;

struct hammer_tally {
  std::atomic<std::uint64_t> count[hammer_clients] = {};
  std::atomic<std::uint64_t> sum[hammer_clients] = {};
};

struct hammer {
  std::uint32_t client;
  std::uint64_t step;
};

tx::behaviour hammered(std::uint64_t n, hammer_tally& t) {
  return {[n, &t](hammer h) {
            tx::become(hammered(n + 1, t));
            // A run that loses its race runs again; only the one that
            // commits runs its action.
            tx::on_commit([&t, h] {
              t.count[h.client].fetch_add(1, std::memory_order_relaxed);
              t.sum[h.client].fetch_add(h.step, std::memory_order_relaxed);
            });
          },
          [n](const tx::actor_ref& customer, bool) { tx::send(customer, n); }};
}

tx::behaviour hammering(const tx::actor_ref& counter) {
  return {[counter](hammer h) {
    tx::send(counter, h);
    if (h.step + 1 < hammer_steps) tx::send(tx::self(), hammer{h.client, h.step + 1});
  }};
}

}  // namespace

TEST_CASE("clients flooding a bounded transactional actor all finish, each step once",
          "[stress][flow_control]") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const bool from_creation = GENERATE(true, false);
  INFO(workers << " workers, " << (from_creation ? "bounded from its creation" : "by collisions"));
  constexpr std::uint32_t bound = 16;
  for (int round = 0; round < 3; ++round) {
    tact::actor_system system{{.workers = workers, .collision_limit = 2, .collision_bound = bound}};
    hammer_tally t;
    const tx::actor_ref counter = from_creation
                                      ? tx::spawn(system, hammered(0, t), tx::bounded{bound})
                                      : tx::spawn(system, hammered(0, t));
    for (std::uint32_t c = 0; c < hammer_clients; ++c)
      tx::send(tx::spawn(system, hammering(counter)), hammer{c, 0});
    system.await_quiescence();
    std::atomic<std::uint64_t> n{0};
    tx::send(counter, tx::spawn(system, {[&n](std::uint64_t v) { n.store(v); }}), true);
    system.await_quiescence();
    CHECK(n.load() == hammer_clients * hammer_steps);
    for (std::uint32_t c = 0; c < hammer_clients; ++c) {
      CHECK(t.count[c].load() == hammer_steps);
      CHECK(t.sum[c].load() == hammer_steps * (hammer_steps - 1) / 2);
    }
    const tact::worker_stats s = system.stats().total;
    INFO(s);
    CHECK(s.tx_rollbacks == 0);
    CHECK(s.tx_serializations <= 1);
    CHECK(s.sends_over_bound == 0);
    system.stop();
  }
}
