// ping_pong for CAF 0.17: the same protocol and message counts as tact.cpp
// (which documents the workload), written as CAF event-based actors.
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using send_ping_atom = caf::atom_constant<caf::atom("sendping")>;
using send_pong_atom = caf::atom_constant<caf::atom("sendpong")>;

// What the actors leave behind for main, each field written by one actor
// before it quits; main reads them after await_all_actors_done().
struct outcome {
  std::uint64_t ping_received = 0;
  std::uint64_t pings_left = 0;
  std::uint64_t pong_received = 0;
  std::uint64_t pongs = 0;
};

struct pong_state {
  std::uint64_t pongs = 0;
  std::uint64_t received = 0;
};

// A SendPing is answered to its sender (CAF messages carry it), as Savina's
// SendPingMessage carries the pinger.
caf::behavior pong_actor(caf::stateful_actor<pong_state>* self, outcome* out) {
  return {
      [=](send_ping_atom) {
        ++self->state.received;
        ++self->state.pongs;
        return send_pong_atom::value;
      },
      [=](stop_atom) {
        ++self->state.received;
        out->pong_received = self->state.received;
        out->pongs = self->state.pongs;
        self->quit();
      },
  };
}

struct ping_state {
  std::uint64_t pings_left = 0;
  std::uint64_t received = 0;
};

caf::behavior ping_actor(caf::stateful_actor<ping_state>* self, std::uint64_t pings,
                         caf::actor pong, outcome* out) {
  self->state.pings_left = pings;
  auto send_next = [=] {
    self->send(pong, send_ping_atom::value);
    --self->state.pings_left;
  };
  return {
      [=](start_atom) {
        ++self->state.received;
        send_next();
      },
      [=](ping_atom) {
        ++self->state.received;
        send_next();
      },
      [=](send_pong_atom) {
        ++self->state.received;
        if (self->state.pings_left > 0) {
          self->send(self, ping_atom::value);
          return;
        }
        self->send(pong, stop_atom::value);
        out->ping_received = self->state.received;
        out->pings_left = self->state.pings_left;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::ping_pong::pings(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  auto pong = system.spawn(pong_actor, &out);
  auto ping = system.spawn(ping_actor, n, pong, &out);
  const double secs = suite::seconds([&] {
    caf::anon_send(ping, start_atom::value);
    system.await_all_actors_done();
  });

  const std::uint64_t messages = out.ping_received + out.pong_received;
  suite::check(out.pings_left == 0 && out.pongs == n, "pong answered " + std::to_string(out.pongs) +
                                                          " of " + std::to_string(n) + " pings");
  const std::uint64_t expected = suite::ping_pong::messages(n);
  suite::check(messages == expected, "the actors received " + std::to_string(messages) +
                                         " messages, expected " + std::to_string(expected));
  suite::report(o, suite::bench_name("ping_pong"), "caf", secs, messages);
}
