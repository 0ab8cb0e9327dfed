// bursts for CAF 0.17: the same ring, bursts and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors. The ring's last hop of a burst tells main, a scoped actor
// waiting in receive, that the burst is done.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using data_atom = caf::atom_constant<caf::atom("data")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

struct ring_state {
  caf::actor next;
  caf::actor main;
  std::uint64_t received = 0;
};

// Leaves its count of received messages in *received when it exits.
caf::behavior ring_actor(caf::stateful_actor<ring_state>* self, std::uint64_t* received) {
  return {
      [=](data_atom, caf::actor& next, caf::actor& main) {
        ++self->state.received;
        self->state.next = std::move(next);
        self->state.main = std::move(main);
      },
      [=](ping_atom, std::int64_t hops_left) {
        ++self->state.received;
        if (--hops_left > 0)
          self->send(self->state.next, ping_atom::value, hops_left);
        else
          self->send(self->state.main, done_atom::value);
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
  const suite::bursts::params p = suite::bursts::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<std::uint64_t> received(static_cast<std::size_t>(p.actors));
  double secs = 0;
  {
    caf::scoped_actor self{system};
    std::vector<caf::actor> ring;
    ring.reserve(received.size());
    for (auto& r : received) ring.push_back(system.spawn(ring_actor, &r));
    for (std::size_t i = 0; i < ring.size(); ++i)
      self->send(ring[i], data_atom::value, ring[(i + 1) % ring.size()], caf::actor{self});
    for (std::int64_t b = 0; b < p.bursts; ++b) {
      std::this_thread::sleep_for(std::chrono::microseconds{p.idle_us});
      secs += suite::seconds([&] {
        self->send(ring[0], ping_atom::value, std::int64_t{p.hops});
        self->receive([](done_atom) {});
      });
    }
    self->send(ring[0], exit_atom::value, std::int64_t{p.actors - 1});
  }
  system.await_all_actors_done();

  std::uint64_t delivered = 0;
  for (const auto r : received) delivered += r;
  const std::uint64_t expected = suite::bursts::messages(p);
  suite::check(delivered == expected, "the ring received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "bursts", "caf", secs, static_cast<std::uint64_t>(p.bursts * p.hops));
}
