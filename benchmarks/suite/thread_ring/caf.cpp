// thread_ring for CAF 0.17: the same ring, tokens and message counts as
// tact.cpp (which documents the workload, including its one change to
// Savina's exit token), written as CAF event-based actors.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using data_atom = caf::atom_constant<caf::atom("data")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

struct ring_state {
  caf::actor next;
  std::uint64_t received = 0;
};

// Leaves its count of received messages in *received when it exits.
caf::behavior ring_actor(caf::stateful_actor<ring_state>* self, std::int64_t actors,
                         std::uint64_t* received) {
  return {
      [=](data_atom, caf::actor& next) {
        ++self->state.received;
        self->state.next = std::move(next);
      },
      [=](ping_atom, std::int64_t pings_left) {
        ++self->state.received;
        if (pings_left > 0)
          self->send(self->state.next, ping_atom::value, pings_left - 1);
        else
          self->send(self->state.next, exit_atom::value, actors - 1);
      },
      [=](exit_atom, std::int64_t exits_left) {
        ++self->state.received;
        if (exits_left > 0) self->send(self->state.next, exit_atom::value, exits_left - 1);
        *received = self->state.received;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::thread_ring::params p = suite::thread_ring::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<std::uint64_t> received(static_cast<std::size_t>(p.actors));
  const double secs = suite::seconds([&] {
    std::vector<caf::actor> ring;
    ring.reserve(received.size());
    for (auto& r : received) ring.push_back(system.spawn(ring_actor, p.actors, &r));
    for (std::size_t i = 0; i < ring.size(); ++i)
      caf::anon_send(ring[i], data_atom::value, ring[(i + 1) % ring.size()]);
    caf::anon_send(ring[0], ping_atom::value, std::int64_t{p.pings});
    system.await_all_actors_done();
  });

  std::uint64_t delivered = 0;
  for (const auto r : received) delivered += r;
  const std::uint64_t expected = suite::thread_ring::messages(p);
  suite::check(delivered == expected, "the ring received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "thread_ring", "caf", secs, delivered);
}
