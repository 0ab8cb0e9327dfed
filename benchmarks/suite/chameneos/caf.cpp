// chameneos for CAF 0.17: the same protocol, colours and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors. As in Savina, the mall spawns the chameneos and each sends its
// first Meet as it starts.
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

// In Savina's order (ChameneosHelper.Color); sent as its integer value.
enum colour : std::int32_t { red, yellow, blue, faded };

std::int32_t complement(std::int32_t mine, std::int32_t other) noexcept {
  if (mine == faded || other == faded) return faded;
  if (mine == other) return mine;
  return 3 - mine - other;  // the third colour
}

using meet_atom = caf::atom_constant<caf::atom("meet")>;
using change_atom = caf::atom_constant<caf::atom("change")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;
using count_atom = caf::atom_constant<caf::atom("count")>;

// What the actors leave for main, written when each exits; read after
// await_all_actors_done().
struct outcome {
  std::uint64_t mall_received = 0;
  std::int64_t sum_meetings = 0;
  std::int64_t faded = 0;
  std::uint64_t chameneos_received = 0;  // written by the mall, from the counts
  std::int64_t not_faded = 0;
};

struct chameneo_state {
  std::int32_t colour = red;
  std::int64_t meetings = 0;
  std::uint64_t received = 0;
};

caf::behavior chameneo_actor(caf::stateful_actor<chameneo_state>* self, caf::actor mall,
                             std::int32_t start) {
  self->state.colour = start;
  const auto me = caf::actor_cast<caf::actor>(self);
  self->send(mall, meet_atom::value, start, me);
  return {
      // A forwarded Meet: this chameneo was the one waiting.
      [=](meet_atom, std::int32_t other, const caf::actor& sender) {
        auto& s = self->state;
        ++s.received;
        s.colour = complement(s.colour, other);
        ++s.meetings;
        self->send(sender, change_atom::value, s.colour);
        self->send(mall, meet_atom::value, s.colour, me);
      },
      [=](change_atom, std::int32_t c) {
        auto& s = self->state;
        ++s.received;
        s.colour = c;
        ++s.meetings;
        self->send(mall, meet_atom::value, s.colour, me);
      },
      [=](exit_atom) {
        auto& s = self->state;
        ++s.received;
        s.colour = faded;
        // The received count rides along so main can check the total.
        self->send(mall, count_atom::value, s.meetings, s.received, s.colour);
        self->quit();
      },
  };
}

struct mall_state {
  std::int64_t meetings_left = 0;
  caf::actor waiting;
  outcome counts;
};

caf::behavior mall_actor(caf::stateful_actor<mall_state>* self, std::int64_t meetings,
                         std::int64_t chameneos, outcome* out) {
  self->state.meetings_left = meetings;
  const auto me = caf::actor_cast<caf::actor>(self);
  for (std::int64_t i = 0; i < chameneos; ++i)
    self->spawn(chameneo_actor, me, static_cast<std::int32_t>(i % 3));
  return {
      [=](meet_atom, std::int32_t c, const caf::actor& sender) {
        auto& s = self->state;
        ++s.counts.mall_received;
        if (s.meetings_left == 0) {
          self->send(sender, exit_atom::value);
        } else if (!s.waiting) {
          s.waiting = sender;
        } else {
          --s.meetings_left;
          self->send(s.waiting, meet_atom::value, c, sender);
          s.waiting = nullptr;
        }
      },
      [=](count_atom, std::int64_t meetings_done, std::uint64_t received, std::int32_t c) {
        auto& s = self->state;
        ++s.counts.mall_received;
        s.counts.sum_meetings += meetings_done;
        s.counts.chameneos_received += received;
        if (c != faded) ++s.counts.not_faded;
        if (++s.counts.faded == chameneos) {
          *out = s.counts;
          self->quit();
        }
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::chameneos::params p = suite::chameneos::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  const double secs = suite::seconds([&] {
    system.spawn(mall_actor, std::int64_t{p.meetings}, std::int64_t{p.chameneos}, &out);
    system.await_all_actors_done();
  });

  suite::check(out.faded == p.chameneos && out.not_faded == 0, "a chameneo did not fade");
  suite::check(out.sum_meetings == 2 * p.meetings,
               "the chameneos counted " + std::to_string(out.sum_meetings) +
                   " meetings, expected " + std::to_string(2 * p.meetings));
  const std::uint64_t delivered = out.mall_received + out.chameneos_received;
  const std::uint64_t expected = suite::chameneos::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "chameneos", "caf", secs, delivered);
}
