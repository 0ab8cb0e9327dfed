// big (Savina's "big", no. 8 of the list in the CAF locality thesis, 6.2.1): many-to-many
// ping-pong. `actors` actors all know each other; each repeatedly pings a
// neighbour chosen at random and waits for its pong before it pings again,
// answering other actors' pings meanwhile. When every actor has sent `pings`
// pings a sink tells them all to exit. Up to `actors` messages are in flight
// at once, each to an arbitrary actor, so it measures sends between unrelated
// actors under load on every worker: no locality to exploit, plenty of
// parallelism.
//
// Savina's protocol, kept as is: main sends the neighbour list to the sink
// and every actor, then a Pong(-1) to every actor to start it. An actor
// receiving a Pong checks it came from the actor it pinged, and then either
// pings the next neighbour (drawn with Savina's PseudoRandom seeded with its
// index) or, after its `pings`-th ping, tells the sink it is done; the sink,
// once all are done, sends every actor Exit. In all
//   (actors + 1) Neighbors + actors Pong(-1) + 2 actors pings Ping and Pong
//   + actors Exit to the sink + actors Exit from it.
//
// Parameters (full / --quick):
//   --actors  pinging actors (360 / 120). Savina's default is 120; the CAF
//             locality thesis (6.2.1) uses 360.
//   --pings   pings per actor (5,000 / 500). Savina's default is 20,000,
//             the CAF locality study's 60,000.
//
// Every actor owns the Ping and the Pong it sends, with its index in them:
// they are read only, so one Pong may be on its way to several pingers at
// once (tact never copies a message). Main's Neighbors and Pong(-1) and the
// sink's Exit are each one object sent to every actor. The timed region
// covers creating the actors, the start messages and the run to quiescence.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

class big_actor;

struct neighbors_msg : tact::message {
  std::span<big_actor* const> all;
};
struct ping_msg : tact::message {
  explicit ping_msg(std::int32_t from) noexcept : sender{from} {}
  std::int32_t sender;
};
struct pong_msg : tact::message {
  explicit pong_msg(std::int32_t from) noexcept : sender{from} {}
  std::int32_t sender;
};
struct exit_msg : tact::message {};

class sink_actor final : public tact::actor {
 public:
  using actor::actor;

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(neighbors_msg& m) {
    ++received_;
    workers_ = m.all;
    return Nodelete;
  }
  inline tact::allocation receive(exit_msg&);

 private:
  std::span<big_actor* const> workers_;
  std::uint64_t done_ = 0;
  std::uint64_t received_ = 0;
  exit_msg exit_;
};

class big_actor final : public tact::actor {
 public:
  big_actor(tact::actor_system& system, std::int32_t id, std::int64_t pings, sink_actor& sink)
      : actor{system}, sink_{sink}, pings_{pings}, random_{id}, ping_{id}, pong_{id} {}

  std::uint64_t received() const noexcept { return received_; }
  std::int64_t pings_sent() const noexcept { return sent_; }
  std::uint64_t wrong_pongs() const noexcept { return wrong_pongs_; }

  tact::allocation receive(neighbors_msg& m) {
    ++received_;
    neighbors_ = m.all;
    return Nodelete;
  }
  tact::allocation receive(ping_msg& m) {
    ++received_;
    *neighbors_[static_cast<std::size_t>(m.sender)] | pong_;
    return Nodelete;
  }
  tact::allocation receive(pong_msg& m) {
    ++received_;
    if (m.sender != expected_) ++wrong_pongs_;
    if (sent_ == pings_) {
      sink_ | done_;
    } else {
      expected_ = random_.next_int(static_cast<std::int32_t>(neighbors_.size()));
      *neighbors_[static_cast<std::size_t>(expected_)] | ping_;
      ++sent_;
    }
    return Nodelete;
  }
  tact::allocation receive(exit_msg&) {
    ++received_;
    return Finished;
  }

 private:
  sink_actor& sink_;
  const std::int64_t pings_;
  suite::savina::pseudo_random random_;
  std::span<big_actor* const> neighbors_;
  std::int32_t expected_ = -1;  // whose pong is due
  std::int64_t sent_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t wrong_pongs_ = 0;
  ping_msg ping_;
  pong_msg pong_;
  exit_msg done_;
};

tact::allocation sink_actor::receive(exit_msg&) {
  ++received_;
  if (++done_ < workers_.size()) return Nodelete;
  for (big_actor* w : workers_) *w | exit_;
  return Finished;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::big::params p = suite::big::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<sink_actor> sink;
  std::vector<std::unique_ptr<big_actor>> owned;
  std::vector<big_actor*> all;
  neighbors_msg neighbors;
  pong_msg start{-1};
  const double secs = suite::seconds([&] {
    sink = std::make_unique<sink_actor>(system);
    for (std::int32_t i = 0; i < p.actors; ++i)
      all.push_back(
          owned.emplace_back(std::make_unique<big_actor>(system, i, p.pings, *sink)).get());
    neighbors.all = all;
    *sink | neighbors;
    for (big_actor* a : all) *a | neighbors;
    for (big_actor* a : all) *a | start;
    system.await_quiescence();
  });

  std::uint64_t delivered = sink->received();
  suite::check(sink->finished(), "the sink did not finish");
  for (const auto& a : owned) {
    suite::check(a->finished() && a->pings_sent() == p.pings,
                 "an actor sent " + std::to_string(a->pings_sent()) + " of " +
                     std::to_string(p.pings) + " pings");
    suite::check(a->wrong_pongs() == 0, "an actor received pongs from actors it had not pinged");
    delivered += a->received();
  }
  const std::uint64_t expected = suite::big::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "big", "tact", secs, delivered);
}
