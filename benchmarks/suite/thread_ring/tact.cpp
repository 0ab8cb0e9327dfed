// thread_ring (Savina's "threadring", no. 2 of the list in the CAF locality thesis, 6.2.1):
// `actors` actors form a ring and one token is passed around it `pings`
// times; then an exit token goes once around the ring and every actor exits.
// Only one message is in flight at a time, but each hop goes to a different
// actor, so it measures the latency of a send plus the cost of switching
// actors (each hop touches another actor's state), with nothing to run in
// parallel.
//
// Savina's protocol: main tells every actor its successor (a Data message
// each), then sends Ping(pings) to actor 0; an actor that receives Ping(k),
// k > 0, sends Ping(k - 1) on, and Ping(0) makes it send Exit on. One
// change: Savina starts the exit token at Exit(actors) and forwards it while
// it is positive, so its last hop reaches the actor that received the first
// one, which has already exited (a dead letter in Akka, a dropped message in
// CAF, an error in tact). Here the token starts at actors - 1, so each actor
// receives it once and the ring closes cleanly. In all
//   actors Data + (pings + 1) Ping + actors Exit.
//
// Parameters (full / --quick):
//   --actors  actors in the ring (1,200 / 100). Savina's default is 100; the
//             CAF locality thesis (6.2.1) uses 1,200.
//   --pings   hops of the ping token (5,000,000 / 200,000). Savina's default
//             is 100,000; the CAF locality study's 1,200,000.
//
// One Ping object and one Exit object travel the whole ring: each actor
// counts the token down in place and sends the same object on (tact never
// copies a message; it is received before it is sent again). The timed
// region covers creating the ring, the Data messages and the run to
// quiescence.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

class ring_actor;

struct data_msg : tact::message {
  ring_actor* next = nullptr;
};
struct ping_token : tact::message {
  std::int64_t pings_left = 0;
};
struct exit_token : tact::message {
  std::int64_t exits_left = 0;  // actors still to be told after the receiver
};

class ring_actor final : public tact::actor {
 public:
  ring_actor(tact::actor_system& system, exit_token& exit, std::int64_t actors)
      : actor{system}, exit_{exit}, actors_{actors} {}

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(data_msg& m) {
    ++received_;
    next_ = m.next;
    return Nodelete;
  }

  tact::allocation receive(ping_token& t) {
    ++received_;
    if (t.pings_left > 0) {
      --t.pings_left;
      *next_ | t;
    } else {
      exit_.exits_left = actors_ - 1;
      *next_ | exit_;
    }
    return Nodelete;
  }

  tact::allocation receive(exit_token& t) {
    ++received_;
    if (t.exits_left > 0) {
      --t.exits_left;
      *next_ | t;
    }
    return Finished;
  }

 private:
  exit_token& exit_;
  const std::int64_t actors_;
  ring_actor* next_ = nullptr;
  std::uint64_t received_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::thread_ring::params p = suite::thread_ring::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::vector<std::unique_ptr<ring_actor>> ring;
  std::vector<data_msg> data(static_cast<std::size_t>(p.actors));
  ping_token ping;
  exit_token exit;
  const double secs = suite::seconds([&] {
    ring.reserve(data.size());
    for (std::size_t i = 0; i < data.size(); ++i)
      ring.push_back(std::make_unique<ring_actor>(system, exit, p.actors));
    for (std::size_t i = 0; i < ring.size(); ++i) {
      data[i].next = ring[(i + 1) % ring.size()].get();
      *ring[i] | data[i];
    }
    ping.pings_left = p.pings;
    *ring[0] | ping;
    system.await_quiescence();
  });

  std::uint64_t delivered = 0;
  for (const auto& a : ring) {
    suite::check(a->finished(), "an actor of the ring did not exit");
    delivered += a->received();
  }
  const std::uint64_t expected = suite::thread_ring::messages(p);
  suite::check(ping.pings_left == 0 && exit.exits_left == 0, "a token stopped early");
  suite::check(delivered == expected, "the ring received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "thread_ring", "tact", secs, delivered);
}
