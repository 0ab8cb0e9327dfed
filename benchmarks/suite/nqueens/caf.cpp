// nqueens for CAF 0.17: the same search, dispatch and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors, with the search code shared in board.hpp.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "board.hpp"
#include "params.hpp"
#include "suite.hpp"

// A board travels by value; it never leaves the process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(nqueens::board)

namespace {

using work_atom = caf::atom_constant<caf::atom("work")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using result_atom = caf::atom_constant<caf::atom("result")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;

caf::behavior worker_actor(caf::stateful_actor<std::uint64_t>* self, caf::actor master, int size,
                           int threshold, std::uint64_t* received) {
  return {
      [=](work_atom, const nqueens::board& b) {
        ++self->state;
        if (b.depth == size) {
          self->send(master, result_atom::value);
        } else if (b.depth >= threshold) {
          nqueens::solve_sequentially(b, size, [=] { self->send(master, result_atom::value); });
        } else {
          for (int column = 0; column < size; ++column) {
            const nqueens::board next = b.with(column);
            if (nqueens::valid(next)) self->send(master, work_atom::value, next);
          }
        }
        self->send(master, done_atom::value);
      },
      [=](stop_atom) {
        *received = ++self->state;
        self->send(master, stop_atom::value);
        self->quit();
      },
  };
}

// What the master leaves for main when it exits.
struct outcome {
  std::uint64_t received = 0;
  std::int64_t solutions = 0;
  std::int64_t items = 0;
};

struct master_state {
  std::vector<caf::actor> workers;
  std::size_t next = 0;
  std::int64_t sent = 0;
  std::int64_t completed = 0;
  std::int64_t stopped = 0;
  outcome counts;
};

caf::behavior master_actor(caf::stateful_actor<master_state>* self, std::int64_t workers, int size,
                           int threshold, std::vector<std::uint64_t>* received, outcome* out) {
  auto send_work = [=](const nqueens::board& b) {
    auto& s = self->state;
    self->send(s.workers[s.next], work_atom::value, b);
    s.next = (s.next + 1) % s.workers.size();
    ++s.sent;
  };
  const auto me = caf::actor_cast<caf::actor>(self);
  for (std::int64_t i = 0; i < workers; ++i)
    self->state.workers.push_back(
        self->spawn(worker_actor, me, size, threshold, &(*received)[static_cast<std::size_t>(i)]));
  // Savina's onPostStart: the first item, to the first worker.
  send_work(nqueens::board{});
  return {
      [=](work_atom, const nqueens::board& b) {
        ++self->state.counts.received;
        send_work(b);
      },
      [=](done_atom) {
        auto& s = self->state;
        ++s.counts.received;
        if (++s.completed == s.sent)
          for (const auto& w : s.workers) self->send(w, stop_atom::value);
      },
      [=](result_atom) {
        ++self->state.counts.received;
        ++self->state.counts.solutions;
      },
      // A worker's acknowledgement of Stop.
      [=](stop_atom) {
        auto& s = self->state;
        ++s.counts.received;
        if (++s.stopped < workers) return;
        s.counts.items = s.sent - 1;
        *out = s.counts;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::nqueens::params p = suite::nqueens::read(o);
  const int size = static_cast<int>(p.n);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  std::vector<std::uint64_t> received(static_cast<std::size_t>(p.workers));
  const double secs = suite::seconds([&] {
    system.spawn(master_actor, std::int64_t{p.workers}, size, static_cast<int>(p.threshold),
                 &received, &out);
    system.await_all_actors_done();
  });

  const std::int64_t expected_solutions = suite::nqueens::solutions(p);
  suite::check(out.solutions == expected_solutions, std::to_string(out.solutions) +
                                                        " solutions found, expected " +
                                                        std::to_string(expected_solutions));
  const std::int64_t items = suite::nqueens::items(p);
  suite::check(out.items == items,
               std::to_string(out.items) + " work items made, expected " + std::to_string(items));
  std::uint64_t delivered = out.received;
  for (const auto r : received) delivered += r;
  const std::uint64_t expected = suite::nqueens::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  // The search is nearly all the time: a time per message would mean little.
  suite::report(o, "nqueens", "caf", secs, 0);
}
