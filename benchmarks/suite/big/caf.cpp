// big for CAF 0.17: the same protocol, random choices and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using neighbors_atom = caf::atom_constant<caf::atom("neighbors")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

// One per actor, written by it when it exits; read by main after
// await_all_actors_done().
struct tally {
  std::uint64_t received = 0;
  std::int64_t pings_sent = 0;
  std::uint64_t wrong_pongs = 0;
};

struct sink_state {
  std::vector<caf::actor> workers;
  std::uint64_t done = 0;
  std::uint64_t received = 0;
};

caf::behavior sink_actor(caf::stateful_actor<sink_state>* self, tally* out) {
  return {
      [=](neighbors_atom, const std::vector<caf::actor>& all) {
        ++self->state.received;
        self->state.workers = all;
      },
      [=](exit_atom) {
        auto& s = self->state;
        ++s.received;
        if (++s.done < s.workers.size()) return;
        for (const auto& w : s.workers) self->send(w, exit_atom::value);
        out->received = s.received;
        self->quit();
      },
  };
}

struct big_state {
  suite::savina::pseudo_random random;
  std::vector<caf::actor> neighbors;
  std::int32_t expected = -1;  // whose pong is due
  tally counts;
};

caf::behavior big_actor(caf::stateful_actor<big_state>* self, std::int32_t id, std::int64_t pings,
                        caf::actor sink, tally* out) {
  self->state.random = suite::savina::pseudo_random{id};
  return {
      [=](neighbors_atom, const std::vector<caf::actor>& all) {
        ++self->state.counts.received;
        self->state.neighbors = all;
      },
      [=](ping_atom, std::int32_t sender) {
        ++self->state.counts.received;
        self->send(self->state.neighbors[static_cast<std::size_t>(sender)], pong_atom::value, id);
      },
      [=](pong_atom, std::int32_t sender) {
        auto& s = self->state;
        ++s.counts.received;
        if (sender != s.expected) ++s.counts.wrong_pongs;
        if (s.counts.pings_sent == pings) {
          self->send(sink, exit_atom::value);
        } else {
          s.expected = s.random.next_int(static_cast<std::int32_t>(s.neighbors.size()));
          self->send(s.neighbors[static_cast<std::size_t>(s.expected)], ping_atom::value, id);
          ++s.counts.pings_sent;
        }
      },
      [=](exit_atom) {
        ++self->state.counts.received;
        *out = self->state.counts;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::big::params p = suite::big::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  tally sink_tally;
  std::vector<tally> tallies(static_cast<std::size_t>(p.actors));
  const double secs = suite::seconds([&] {
    auto sink = system.spawn(sink_actor, &sink_tally);
    std::vector<caf::actor> all;
    all.reserve(tallies.size());
    for (std::int32_t i = 0; i < p.actors; ++i)
      all.push_back(system.spawn(big_actor, i, std::int64_t{p.pings}, sink,
                                 &tallies[static_cast<std::size_t>(i)]));
    // One message, shared by every receiver (CAF messages are copy on write).
    const caf::message neighbors = caf::make_message(neighbors_atom::value, all);
    caf::anon_send(sink, neighbors);
    for (const auto& a : all) caf::anon_send(a, neighbors);
    for (const auto& a : all) caf::anon_send(a, pong_atom::value, std::int32_t{-1});
    system.await_all_actors_done();
  });

  std::uint64_t delivered = sink_tally.received;
  for (const auto& t : tallies) {
    suite::check(t.pings_sent == p.pings, "an actor sent " + std::to_string(t.pings_sent) + " of " +
                                              std::to_string(p.pings) + " pings");
    suite::check(t.wrong_pongs == 0, "an actor received pongs from actors it had not pinged");
    delivered += t.received;
  }
  const std::uint64_t expected = suite::big::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "big", "caf", secs, delivered);
}
