// logistic_map for CAF 0.17: the same protocol, series and message counts
// as tact.cpp (which documents the workload), written as CAF event-based
// actors. A worker waiting for its computer counts the NextTerms that
// arrive and remembers a GetTerm, as the tact worker does (Savina's manual
// stash). The CAF team's port instead becomes a behaviour that skips all
// but the answer; CAF then tries every skipped message again at each
// unbecome, which is quadratic in this workload's backlog (5,000 terms per
// series took 4.8 s at one worker, against 0.1 s for this version).
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using suite::logistic_map::increment;
using suite::logistic_map::next_term;
using suite::logistic_map::start_rate;

using start_atom = caf::atom_constant<caf::atom("start")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using next_term_atom = caf::atom_constant<caf::atom("nextterm")>;
using get_term_atom = caf::atom_constant<caf::atom("getterm")>;
using compute_atom = caf::atom_constant<caf::atom("compute")>;
using result_atom = caf::atom_constant<caf::atom("result")>;

caf::behavior rate_computer(caf::stateful_actor<std::uint64_t>* self, double rate,
                            std::uint64_t* received) {
  return {
      [=](compute_atom, double term) {
        ++self->state;
        return caf::make_message(result_atom::value, next_term(term, rate));
      },
      [=](stop_atom) {
        *received = ++self->state;
        self->quit();
      },
  };
}

struct worker_state {
  double term = 0;
  bool waiting = false;
  std::uint64_t pending_next = 0;  // NextTerms that arrived while waiting
  bool pending_get = false;        // a GetTerm arrived while waiting
  std::uint64_t received = 0;
};

caf::behavior series_worker(caf::stateful_actor<worker_state>* self, caf::actor master,
                            caf::actor computer, std::size_t series, double start,
                            std::uint64_t* received) {
  self->state.term = start;
  auto request_next = [=] {
    self->send(computer, compute_atom::value, self->state.term);
    self->state.waiting = true;
  };
  auto report = [=] { self->send(master, result_atom::value, series, self->state.term); };
  return {
      [=](next_term_atom) {
        auto& s = self->state;
        ++s.received;
        if (s.waiting)
          ++s.pending_next;
        else
          request_next();
      },
      [=](get_term_atom) {
        auto& s = self->state;
        ++s.received;
        if (s.waiting)
          s.pending_get = true;
        else
          report();
      },
      // The computer's answer.
      [=](result_atom, double term) {
        auto& s = self->state;
        ++s.received;
        s.waiting = false;
        s.term = term;
        if (s.pending_next > 0) {
          --s.pending_next;
          request_next();
        } else if (s.pending_get) {
          s.pending_get = false;
          report();
        }
      },
      [=](stop_atom) {
        *received = ++self->state.received;
        self->quit();
      },
  };
}

struct master_state {
  std::vector<caf::actor> computers;
  std::vector<caf::actor> workers;
  std::size_t results = 0;
  std::uint64_t received = 0;
};

// Leaves each series' final term in terms[series].
caf::behavior master_actor(caf::stateful_actor<master_state>* self, std::size_t series,
                           std::int64_t terms, std::vector<double>* final_terms,
                           std::vector<std::uint64_t>* received) {
  auto& s = self->state;
  const auto me = caf::actor_cast<caf::actor>(self);
  // received: [0] the master, then computers, then workers.
  for (std::size_t i = 0; i < series; ++i)
    s.computers.push_back(self->spawn(
        rate_computer, start_rate + static_cast<double>(i) * increment, &(*received)[1 + i]));
  for (std::size_t i = 0; i < series; ++i)
    s.workers.push_back(self->spawn(series_worker, me, s.computers[i % series], i,
                                    static_cast<double>(i) * increment,
                                    &(*received)[1 + series + i]));
  return {
      [=](start_atom) {
        auto& s = self->state;
        ++s.received;
        for (std::int64_t i = 0; i < terms; ++i)
          for (const auto& w : s.workers) self->send(w, next_term_atom::value);
        for (const auto& w : s.workers) self->send(w, get_term_atom::value);
      },
      [=](result_atom, std::size_t from, double term) {
        auto& s = self->state;
        ++s.received;
        (*final_terms)[from] = term;
        if (++s.results < s.workers.size()) return;
        for (const auto& c : s.computers) self->send(c, stop_atom::value);
        for (const auto& w : s.workers) self->send(w, stop_atom::value);
        (*received)[0] = s.received;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::logistic_map::params p = suite::logistic_map::read(o);
  const auto s = static_cast<std::size_t>(p.series);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<double> final_terms(s);
  std::vector<std::uint64_t> received(1 + 2 * s);
  const double secs = suite::seconds([&] {
    auto boss = system.spawn(master_actor, s, std::int64_t{p.terms}, &final_terms, &received);
    caf::anon_send(boss, start_atom::value);
    system.await_all_actors_done();
  });

  std::uint64_t delivered = 0;
  for (const auto r : received) delivered += r;
  for (std::size_t i = 0; i < s; ++i) {
    const double term = suite::logistic_map::final_term(p, i);
    suite::check(term == final_terms[i], "series " + std::to_string(i) + " ended at " +
                                             std::to_string(final_terms[i]) + ", expected " +
                                             std::to_string(term));
  }
  const std::uint64_t expected = suite::logistic_map::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "logistic_map", "caf", secs, delivered);
}
