// concurrent_dictionary for CAF 0.17: the same protocol, random draws and
// message counts as tact.cpp (which documents the workload), written as CAF
// event-based actors; the dictionary answers each request to its sender.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "reference.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using suite::dictionary::data_limit;
using suite::dictionary::data_map;

using do_work_atom = caf::atom_constant<caf::atom("dowork")>;
using read_atom = caf::atom_constant<caf::atom("read")>;
using write_atom = caf::atom_constant<caf::atom("write")>;
using result_atom = caf::atom_constant<caf::atom("result")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using end_work_atom = caf::atom_constant<caf::atom("endwork")>;

// What the actors leave for main when they exit; read after
// await_all_actors_done().
struct dictionary_outcome {
  std::uint64_t received = 0;
  std::size_t size = 0;
  std::int64_t writes = 0;
};
struct worker_outcome {
  std::uint64_t received = 0;
  std::int64_t answers = 0;
};

struct dictionary_state {
  data_map map;
  dictionary_outcome counts;
};

// Takes the prepared map over at start (a move: nothing is copied).
caf::behavior dictionary_actor(caf::stateful_actor<dictionary_state>* self, data_map* initial,
                               dictionary_outcome* out) {
  self->state.map = std::move(*initial);
  return {
      [=](write_atom, std::int32_t key, std::int32_t value) {
        ++self->state.counts.received;
        ++self->state.counts.writes;
        self->state.map[key] = value;
        return caf::make_message(result_atom::value, value);
      },
      [=](read_atom, std::int32_t key) {
        ++self->state.counts.received;
        const auto found = self->state.map.find(key);
        return caf::make_message(result_atom::value,
                                 found == self->state.map.end() ? -1 : found->second);
      },
      [=](end_work_atom) {
        auto& s = self->state;
        ++s.counts.received;
        s.counts.size = s.map.size();
        *out = s.counts;
        self->quit();
      },
  };
}

struct master_state {
  std::int64_t done = 0;
  std::uint64_t received = 0;
};

caf::behavior master_actor(caf::stateful_actor<master_state>* self, caf::actor dictionary,
                           std::int64_t workers, std::uint64_t* received) {
  return {
      [=](done_atom) {
        ++self->state.received;
        if (++self->state.done < workers) return;
        self->send(dictionary, end_work_atom::value);
        *received = self->state.received;
        self->quit();
      },
  };
}

struct worker_state {
  suite::savina::pseudo_random random;
  std::int64_t count = 0;
  worker_outcome counts;
};

caf::behavior worker_actor(caf::stateful_actor<worker_state>* self, caf::actor master,
                           caf::actor dictionary, std::int64_t id, std::int64_t requests,
                           std::int64_t write_percent, worker_outcome* out) {
  self->state.random = suite::savina::pseudo_random{id + requests + write_percent};
  auto next = [=] {
    auto& s = self->state;
    if (++s.count > requests) {
      self->send(master, done_atom::value);
      *out = s.counts;
      self->quit();
      return;
    }
    if (s.random.next_int(100) < write_percent) {
      const std::int32_t key = s.random.next_int() % data_limit;
      self->send(dictionary, write_atom::value, key, s.random.next_int());
    } else {
      self->send(dictionary, read_atom::value, s.random.next_int() % data_limit);
    }
  };
  return {
      [=](do_work_atom) {
        ++self->state.counts.received;
        next();
      },
      [=](result_atom, std::int32_t) {
        ++self->state.counts.received;
        ++self->state.counts.answers;
        next();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::dictionary::params p = suite::dictionary::read(o);
  data_map initial = suite::dictionary::initial_data();

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  dictionary_outcome dict_out;
  std::uint64_t master_received = 0;
  std::vector<worker_outcome> crew_out(static_cast<std::size_t>(p.workers));
  const double secs = suite::seconds([&] {
    auto dict = system.spawn(dictionary_actor, &initial, &dict_out);
    auto boss = system.spawn(master_actor, dict, std::int64_t{p.workers}, &master_received);
    for (std::int64_t i = 0; i < p.workers; ++i)
      caf::anon_send(
          system.spawn(worker_actor, boss, dict, i, std::int64_t{p.requests},
                       std::int64_t{p.write_percent}, &crew_out[static_cast<std::size_t>(i)]),
          do_work_atom::value);
    system.await_all_actors_done();
  });

  std::uint64_t delivered = dict_out.received + master_received;
  for (const auto& w : crew_out) {
    suite::check(w.answers == p.requests, "a worker had " + std::to_string(w.answers) + " of " +
                                              std::to_string(p.requests) + " answers");
    delivered += w.received;
  }
  const std::int64_t writes =
      suite::dictionary::expected_writes(p.workers, p.requests, p.write_percent);
  suite::check(dict_out.writes == writes, "the dictionary took " + std::to_string(dict_out.writes) +
                                              " writes, expected " + std::to_string(writes));
  suite::check(dict_out.size == static_cast<std::size_t>(data_limit),
               "the dictionary holds " + std::to_string(dict_out.size) + " entries");
  const std::uint64_t expected = suite::dictionary::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "concurrent_dictionary", "caf", secs, delivered);
}
