// dynamic send, CAF: the same workload as tact.cpp. Each actor of the
// chain, on its message, spawns the next actor, sends it the count of
// actors reached so far, and quits; the last one sends the count to the
// waiting main thread. (Spawning with caf::lazy_init, so that a link is
// scheduled only by its message, measured no different.)
//
// Parameters: as tact.cpp (actors).
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using hop_atom = caf::atom_constant<caf::atom("hop")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

// `left`: links still to spawn after this one.
caf::behavior chain_link(caf::event_based_actor* self, std::uint64_t left, caf::actor done_to) {
  return {
      [=](hop_atom, std::uint64_t count) {
        if (left > 0) {
          auto next = self->spawn(chain_link, left - 1, done_to);
          self->send(next, hop_atom::value, count + 1);
        } else {
          self->send(done_to, done_atom::value, count);
        }
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t expected = suite::dynamic_send::actors(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t reached = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      auto first = system.spawn(chain_link, expected - 1, caf::actor{main_actor});
      main_actor->send(first, hop_atom::value, std::uint64_t{1});
      main_actor->receive([&](done_atom, std::uint64_t count) { reached = count; });
    });
  }
  system.await_all_actors_done();

  suite::check(reached == expected, "the last actor was reached after " + std::to_string(reached) +
                                        " of " + std::to_string(expected) + " hops");
  suite::report(o, "dynamic_send", "caf", secs, expected);
}
