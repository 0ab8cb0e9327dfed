// counting for CAF 0.17: the same protocol and message counts as tact.cpp
// (which documents the workload), written as CAF event-based actors.
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using increment_atom = caf::atom_constant<caf::atom("increment")>;
using retrieve_atom = caf::atom_constant<caf::atom("retrieve")>;
using result_atom = caf::atom_constant<caf::atom("result")>;

// Written by each actor before it quits; read by main after
// await_all_actors_done().
struct outcome {
  std::uint64_t producer_received = 0;
  std::uint64_t counted = 0;
  std::uint64_t counter_received = 0;
};

struct counter_state {
  std::uint64_t count = 0;
  std::uint64_t received = 0;
};

caf::behavior counter_actor(caf::stateful_actor<counter_state>* self, outcome* out) {
  return {
      [=](increment_atom) {
        ++self->state.received;
        ++self->state.count;
      },
      // Retrieve is answered to its sender, as Savina's RetrieveMessage
      // carries the producer.
      [=](retrieve_atom) {
        ++self->state.received;
        out->counter_received = self->state.received;
        self->quit();
        return caf::make_message(result_atom::value, self->state.count);
      },
  };
}

caf::behavior producer_actor(caf::stateful_actor<std::uint64_t>* self, caf::actor counter,
                             std::uint64_t messages, outcome* out) {
  return {
      [=](start_atom) {
        ++self->state;
        for (std::uint64_t i = 0; i < messages; ++i) self->send(counter, increment_atom::value);
        self->send(counter, retrieve_atom::value);
      },
      [=](result_atom, std::uint64_t count) {
        ++self->state;
        out->producer_received = self->state;
        out->counted = count;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::counting::increments(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  auto counter = system.spawn(counter_actor, &out);
  auto source = system.spawn(producer_actor, counter, n, &out);
  const double secs = suite::seconds([&] {
    caf::anon_send(source, start_atom::value);
    system.await_all_actors_done();
  });

  const std::uint64_t delivered = out.producer_received + out.counter_received;
  suite::check(out.counted == n, "the counter counted " + std::to_string(out.counted) + " of " +
                                     std::to_string(n) + " increments");
  const std::uint64_t expected = suite::counting::messages(n);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, suite::bench_name("counting"), "caf", secs, delivered);
}
