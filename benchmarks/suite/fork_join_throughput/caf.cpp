// fork_join_throughput for CAF 0.17: the same work and message counts as
// tact.cpp (which documents the workload), written as CAF event-based actors.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using work_atom = caf::atom_constant<caf::atom("work")>;

// One per actor, written by it before it quits; read by main after
// await_all_actors_done().
struct tally {
  std::uint64_t processed = 0;
  std::uint64_t positive = 0;
};

struct throughput_state {
  std::uint64_t processed = 0;
  std::uint64_t positive = 0;
};

caf::behavior throughput_actor(caf::stateful_actor<throughput_state>* self, std::uint64_t messages,
                               tally* out) {
  const double theta = suite::savina::theta;
  return {
      [=](work_atom) {
        auto& s = self->state;
        ++s.processed;
        if (suite::savina::perform_computation(theta) > 0) ++s.positive;
        if (s.processed == messages) {
          *out = {s.processed, s.positive};
          self->quit();
        }
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::fork_join_throughput::params p = suite::fork_join_throughput::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<tally> tallies(static_cast<std::size_t>(p.actors));
  const double secs = suite::seconds([&] {
    std::vector<caf::actor> pool;
    pool.reserve(tallies.size());
    for (auto& t : tallies) pool.push_back(system.spawn(throughput_actor, p.messages, &t));
    for (std::uint64_t m = 0; m < p.messages; ++m)
      for (const auto& a : pool) caf::anon_send(a, work_atom::value);
    system.await_all_actors_done();
  });

  std::uint64_t delivered = 0;
  for (const auto& t : tallies) {
    suite::check(t.processed == p.messages && t.positive == p.messages,
                 "an actor processed " + std::to_string(t.processed) + " of " +
                     std::to_string(p.messages) + " messages (" + std::to_string(t.positive) +
                     " positive results)");
    delivered += t.processed;
  }
  suite::report(o, "fork_join_throughput", "caf", secs, delivered);
}
