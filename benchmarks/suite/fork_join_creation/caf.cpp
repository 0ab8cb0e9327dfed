// fork_join_creation for CAF 0.17: the same work and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors.
#include <atomic>
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using work_atom = caf::atom_constant<caf::atom("work")>;

caf::behavior fork_join_actor(caf::event_based_actor* self, std::atomic<std::uint64_t>* positive) {
  return {
      [=](work_atom) {
        if (suite::savina::perform_computation(suite::savina::theta) > 0)
          positive->fetch_add(1, std::memory_order_relaxed);
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::fork_join_creation::actors(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::atomic<std::uint64_t> positive{0};
  const double secs = suite::seconds([&] {
    for (std::uint64_t i = 0; i < n; ++i)
      caf::anon_send(system.spawn(fork_join_actor, &positive), work_atom::value);
    system.await_all_actors_done();
  });

  // Each actor quits after its one message, so every computation counted
  // is one message delivered.
  suite::check(positive.load() == n, std::to_string(positive.load()) + " of " + std::to_string(n) +
                                         " actors computed a result");
  suite::report(o, "fork_join_creation", "caf", secs, n);
}
