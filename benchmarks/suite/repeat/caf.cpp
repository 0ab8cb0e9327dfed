// repeat, CAF: the same workload as tact.cpp. Main spawns the client, then
// the servers (each knowing the client), and hands the client the servers
// with its go message. A server answers each request with its count of
// requests served and quits after the last; the client checks that every
// reply of repetition r (from 0) carries r + 1, and after its last gather
// reports to the main thread and quits. Since a reply with the right count
// arrives from every server in every repetition, every server served every
// request; unlike tact.cpp, servers are not asked again afterwards.
//
// Parameters: as tact.cpp (servers, repetitions).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "suite.hpp"

namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;
using request_atom = caf::atom_constant<caf::atom("request")>;
using reply_atom = caf::atom_constant<caf::atom("reply")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct server_state {
  std::uint32_t served = 0;
};

caf::behavior server(caf::stateful_actor<server_state>* self, caf::actor client,
                     std::uint32_t repetitions) {
  return {
      [=](request_atom) {
        const std::uint32_t answer = ++self->state.served;
        self->send(client, reply_atom::value, answer);
        if (answer == repetitions) self->quit();
      },
  };
}

struct client_state {
  std::vector<caf::actor> servers;
  std::uint32_t repetition = 0;
  std::uint64_t gathered = 0;
  std::uint64_t replies = 0;
  std::uint64_t wrong_answers = 0;
};

using client_actor = caf::stateful_actor<client_state>;

void scatter(client_actor* self) {
  for (const caf::actor& s : self->state.servers) self->send(s, request_atom::value);
}

caf::behavior client(client_actor* self, std::uint32_t repetitions, caf::actor done_to) {
  return {
      [=](go_atom, std::vector<caf::actor>& servers) {
        self->state.servers = std::move(servers);
        scatter(self);
      },
      [=](reply_atom, std::uint32_t answer) {
        auto& s = self->state;
        ++s.replies;
        if (answer != s.repetition + 1) ++s.wrong_answers;
        if (++s.gathered < s.servers.size()) return;
        s.gathered = 0;
        if (++s.repetition == repetitions) {
          self->send(done_to, done_atom::value, s.replies, s.wrong_answers, s.repetition);
          s.servers.clear();
          self->quit();
          return;
        }
        scatter(self);
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::int64_t servers = o.param("servers", 10'000, 2'000);
  const std::int64_t repetitions = o.param("repetitions", 60, 5);
  suite::check(servers >= 1 && repetitions >= 1, "servers and repetitions must be at least 1");
  const auto reps = static_cast<std::uint32_t>(repetitions);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t replies = 0;
  std::uint64_t wrong_answers = 0;
  std::uint32_t repetitions_done = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      const caf::actor c = system.spawn(client, reps, caf::actor{main_actor});
      std::vector<caf::actor> handles;
      handles.reserve(static_cast<std::size_t>(servers));
      for (std::int64_t i = 0; i < servers; ++i) handles.push_back(system.spawn(server, c, reps));
      main_actor->send(c, go_atom::value, std::move(handles));
      main_actor->receive([&](done_atom, std::uint64_t r, std::uint64_t w, std::uint32_t done) {
        replies = r;
        wrong_answers = w;
        repetitions_done = done;
      });
    });
  }
  system.await_all_actors_done();

  const auto expected = static_cast<std::uint64_t>(servers) * reps;
  suite::check(replies == expected && repetitions_done == reps,
               "the client gathered " + std::to_string(replies) + " of " +
                   std::to_string(expected) + " replies over " +
                   std::to_string(repetitions_done) + " of " + std::to_string(reps) +
                   " repetitions");
  suite::check(wrong_answers == 0,
               std::to_string(wrong_answers) + " replies carried the wrong repetition");
  suite::report(o, "repeat", "caf", secs, 2 * replies);
}
