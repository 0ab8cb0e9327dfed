// static send, CAF: the same workload as tact.cpp. One event-based actor
// sends a ping to itself until it has received `messages`, then tells the
// waiting main thread how many it received. CAF allocates a mailbox element
// per send; that is the framework's cost, not extra work.
//
// Parameters: as tact.cpp (messages).
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct echo_state {
  std::uint64_t received = 0;
};

caf::behavior echo(caf::stateful_actor<echo_state>* self, std::uint64_t limit, caf::actor done_to) {
  return {
      [=](ping_atom) {
        if (++self->state.received < limit) {
          self->send(self, ping_atom::value);
        } else {
          self->send(done_to, done_atom::value, self->state.received);
          self->quit();
        }
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t messages = suite::static_send::messages(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(o.threads()));
  caf::actor_system system{cfg};
  caf::scoped_actor main_actor{system};
  const caf::actor target = system.spawn(echo, messages, caf::actor{main_actor});
  std::uint64_t received = 0;
  const double secs = suite::seconds([&] {
    main_actor->send(target, ping_atom::value);
    main_actor->receive([&](done_atom, std::uint64_t n) { received = n; });
  });

  suite::check(received == messages,
               "the actor received " + std::to_string(received) + " of " +
                   std::to_string(messages) + " messages");
  suite::report(o, suite::bench_name("static_send"), "caf", secs, received);
}
