// contended counter for CAF 0.17: the same clients, increments and checks
// as tact.cpp (which documents the workload); the counter is a stateful
// actor holding an integer, which CAF runs one message at a time. Where
// tact's main waits for quiescence, each CAF client tells main when it has
// sent its last increment (`clients` messages more than tact's, not
// counted); main then asks the counter, whose mailbox already holds every
// increment, for its count.
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using increment_atom = caf::atom_constant<caf::atom("increment")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using step_atom = caf::atom_constant<caf::atom("step")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

caf::behavior counter_actor(caf::stateful_actor<std::uint64_t>* self) {
  return {
      [=](increment_atom) { ++self->state; },
      [=](get_atom) { return self->state; },
  };
}

caf::behavior client_actor(caf::event_based_actor* self, caf::actor target, caf::actor done_to) {
  return {
      [=](step_atom, std::uint64_t left) {
        self->send(target, increment_atom::value);
        if (left > 1) {
          self->send(self, step_atom::value, left - 1);
          return;
        }
        self->send(done_to, done_atom::value);
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::contended_counter::params p = suite::contended_counter::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t count = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      const caf::actor shared = system.spawn(counter_actor);
      for (std::uint64_t i = 0; i < p.clients; ++i)
        main_actor->send(system.spawn(client_actor, shared, caf::actor{main_actor}),
                         step_atom::value, p.increments);
      for (std::uint64_t i = 0; i < p.clients; ++i) main_actor->receive([](done_atom) {});
      main_actor->send(shared, get_atom::value);
      main_actor->receive([&](std::uint64_t n) { count = n; });
      caf::anon_send_exit(shared, caf::exit_reason::user_shutdown);
    });
  }
  system.await_all_actors_done();

  suite::check(count == suite::contended_counter::total(p),
               "the counter counted " + std::to_string(count) + " of " +
                   std::to_string(suite::contended_counter::total(p)) + " increments");
  suite::report(o, "tx_counter", "caf", secs, suite::contended_counter::messages(p));
}
