// trapezoid for CAF 0.17: the same split, computation and message counts as
// tact.cpp (which documents the workload), written as CAF event-based
// actors.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "integrand.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace {

using suite::trapezoid::area;
using suite::trapezoid::left_end;
using suite::trapezoid::right_end;

using start_atom = caf::atom_constant<caf::atom("start")>;
using work_atom = caf::atom_constant<caf::atom("work")>;
using result_atom = caf::atom_constant<caf::atom("result")>;

caf::behavior worker_actor(caf::event_based_actor* self, caf::actor master, std::size_t id) {
  return {
      [=](work_atom, double l, double r, double h) {
        self->send(master, result_atom::value, id, area(l, r, h));
        self->quit();
      },
  };
}

// What the master leaves for main when it exits.
struct outcome {
  std::vector<double> l;  // each worker's range
  std::vector<double> r;
  double h = 0;
  std::vector<double> areas;
  double total = 0;
  std::uint64_t received = 0;
};

struct master_state {
  std::vector<caf::actor> workers;
  outcome result;
  std::size_t results = 0;
};

caf::behavior master_actor(caf::stateful_actor<master_state>* self, std::size_t workers,
                           std::int64_t pieces, outcome* out) {
  auto& s = self->state;
  const auto me = caf::actor_cast<caf::actor>(self);
  for (std::size_t i = 0; i < workers; ++i) s.workers.push_back(self->spawn(worker_actor, me, i));
  s.result.l.resize(workers);
  s.result.r.resize(workers);
  s.result.areas.resize(workers);
  return {
      [=](start_atom) {
        auto& s = self->state;
        ++s.result.received;
        const double h = (right_end - left_end) / static_cast<double>(pieces);
        const double range = (right_end - left_end) / static_cast<double>(workers);
        s.result.h = h;
        for (std::size_t i = 0; i < workers; ++i) {
          const double l = range * static_cast<double>(i) + left_end;
          const double r = l + range;
          s.result.l[i] = l;
          s.result.r[i] = r;
          self->send(s.workers[i], work_atom::value, l, r, h);
        }
      },
      [=](result_atom, std::size_t from, double a) {
        auto& s = self->state;
        ++s.result.received;
        s.result.areas[from] = a;
        if (++s.results < workers) return;
        for (const double x : s.result.areas) s.result.total += x;
        *out = std::move(s.result);
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::trapezoid::params p = suite::trapezoid::read(o);
  const auto w = static_cast<std::size_t>(p.workers);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  const double secs = suite::seconds([&] {
    auto boss = system.spawn(master_actor, w, std::int64_t{p.pieces}, &out);
    caf::anon_send(boss, start_atom::value);
    system.await_all_actors_done();
  });

  suite::check(out.areas.size() == w, "the master did not collect every area");
  for (const std::size_t i : {std::size_t{0}, w / 2, w - 1}) {
    // The same operations in the same order: equal, not merely close.
    suite::check(out.areas[i] == area(out.l[i], out.r[i], out.h),
                 "worker " + std::to_string(i) + " computed a wrong area");
  }
  suite::check(std::isfinite(out.total), "the total area is not finite");
  suite::check(out.received == 1 + w,
               "the master received " + std::to_string(out.received) + " messages");
  // Computing f is the whole cost: a time per message would mean nothing.
  suite::report(o, "trapezoid", "caf", secs, 0);
}
