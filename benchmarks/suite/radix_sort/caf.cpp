// radix_sort for CAF 0.17: the same pipeline, draws and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using suite::radix_sort::draw;
using suite::radix_sort::seed;

using start_atom = caf::atom_constant<caf::atom("start")>;
using value_atom = caf::atom_constant<caf::atom("value")>;

// Leaves what it received, in order, in *seen.
caf::behavior validator(caf::event_based_actor* self, std::size_t values,
                        std::vector<std::int64_t>* seen) {
  seen->reserve(values);
  return {
      [=](value_atom, std::int64_t v) {
        seen->push_back(v);
        if (seen->size() == values) self->quit();
      },
  };
}

struct stage_state {
  std::vector<std::int64_t> held;  // values whose bit is set, in arrival order
  std::uint64_t received = 0;
};

caf::behavior sort_stage(caf::stateful_actor<stage_state>* self, std::size_t values,
                         std::int64_t radix, caf::actor next, std::uint64_t* received) {
  self->state.held.reserve(values);
  return {
      [=](value_atom, std::int64_t v) {
        auto& s = self->state;
        ++s.received;
        if ((v & radix) == 0)
          self->send(next, value_atom::value, v);
        else
          s.held.push_back(v);
        if (s.received < values) return;
        for (const std::int64_t held : s.held) self->send(next, value_atom::value, held);
        *received = s.received;
        self->quit();
      },
  };
}

caf::behavior source(caf::event_based_actor* self, std::size_t values, std::int64_t max_value,
                     caf::actor first) {
  return {
      [=](start_atom) {
        suite::savina::pseudo_random random{seed};
        for (std::size_t i = 0; i < values; ++i)
          self->send(first, value_atom::value, draw(random, max_value));
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::radix_sort::params p = suite::radix_sort::read(o);
  const auto n = static_cast<std::size_t>(p.values);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<std::int64_t> seen;
  std::size_t stage_count = 0;
  for (std::int64_t radix = p.max_value / 2; radix > 0; radix /= 2) ++stage_count;
  std::vector<std::uint64_t> received(stage_count);
  const double secs = suite::seconds([&] {
    caf::actor next = system.spawn(validator, n, &seen);
    std::size_t i = 0;
    for (std::int64_t radix = p.max_value / 2; radix > 0; radix /= 2)
      next = system.spawn(sort_stage, n, radix, next, &received[i++]);
    caf::anon_send(system.spawn(source, n, std::int64_t{p.max_value}, next), start_atom::value);
    system.await_all_actors_done();
  });

  const std::vector<std::int64_t> expected = suite::radix_sort::expected_values(p);
  suite::check(seen == expected, "the validator did not receive the values sorted");
  std::uint64_t delivered = 1 + seen.size();
  for (const auto r : received) delivered += r;
  const std::uint64_t expected_messages = suite::radix_sort::messages(p, stage_count);
  suite::check(delivered == expected_messages, "the actors received " + std::to_string(delivered) +
                                                   " messages, expected " +
                                                   std::to_string(expected_messages));
  suite::report(o, "radix_sort", "caf", secs, delivered);
}
