// trapezoid (Savina's "trapezoid", no. 28 of the list in the CAF locality thesis, 6.2.1):
// the integral of f(x) = sin(x^3 - 1) / (x + 1) * sqrt(1 + exp(sqrt(2x)))
// over [1, 5] by the trapezoidal rule with `pieces` pieces, split evenly
// between `workers` actors. Almost all the time goes into computing f, with
// one message per worker each way, so it measures how well the engine spreads
// independent compute-bound actors over its workers (the runtime should halve
// from one worker to two on two cores) and nothing of its messaging.
//
// Savina's protocol, kept as is: a master splits [l, r] into `workers`
// ranges, sends each worker its range and the piece width, and sums their
// areas. In all 1 + workers Work + workers Result. Each worker's area is a
// fixed sequence of floating-point operations, so main recomputes three of
// them (the first, middle and last worker's) and checks them bit for bit,
// and the master sums the areas in worker order, so the total is the same
// in every run.
//
// Parameters (full / --quick):
//   --pieces   trapezoids (10,000,000 / 1,500,000), Savina's default; the
//              CAF locality study uses 400,000,000.
//   --workers  worker actors (100 / 100). Savina's default is 100; the CAF
//              locality study uses 4,000.
//
// The master owns the Work message of every worker (each carries its own
// range) and every worker the Result it sends. The timed region covers
// creating the actors and the run to quiescence. The report gives no time
// per message: computing f is the whole cost.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "integrand.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace {

using suite::trapezoid::area;
using suite::trapezoid::left_end;
using suite::trapezoid::right_end;

class master;

struct start_msg : tact::message {};
struct work_msg : tact::message {
  double l = 0;
  double r = 0;
  double h = 0;
};
struct result_msg : tact::message {
  std::size_t worker = 0;
  double area = 0;
};

class worker final : public tact::actor {
 public:
  worker(tact::actor_system& system, master& boss, std::size_t id) : actor{system}, master_{boss} {
    result_.worker = id;
  }

  inline tact::allocation receive(work_msg& w);

 private:
  master& master_;
  result_msg result_;
};

class master final : public tact::actor {
 public:
  master(tact::actor_system& system, std::int64_t pieces) : actor{system}, pieces_{pieces} {}

  // Before the start message.
  void direct(std::vector<std::unique_ptr<worker>>& workers) {
    workers_ = &workers;
    work_.resize(workers.size());
    areas_.resize(workers.size());
  }

  std::uint64_t received() const noexcept { return received_; }
  const std::vector<double>& areas() const noexcept { return areas_; }
  const std::vector<work_msg>& work() const noexcept { return work_; }
  double total() const noexcept { return total_; }

  tact::allocation receive(start_msg&) {
    ++received_;
    const double h = (right_end - left_end) / static_cast<double>(pieces_);
    const double range = (right_end - left_end) / static_cast<double>(work_.size());
    for (std::size_t i = 0; i < work_.size(); ++i) {
      work_[i].l = range * static_cast<double>(i) + left_end;
      work_[i].r = work_[i].l + range;
      work_[i].h = h;
      *(*workers_)[i] | work_[i];
    }
    return Nodelete;
  }
  tact::allocation receive(result_msg& m) {
    ++received_;
    areas_[m.worker] = m.area;
    if (++results_ < areas_.size()) return Nodelete;
    for (const double a : areas_) total_ += a;
    return Finished;
  }

 private:
  const std::int64_t pieces_;
  std::vector<std::unique_ptr<worker>>* workers_ = nullptr;
  std::vector<work_msg> work_;
  std::vector<double> areas_;
  std::size_t results_ = 0;
  double total_ = 0;
  std::uint64_t received_ = 0;
};

tact::allocation worker::receive(work_msg& w) {
  result_.area = area(w.l, w.r, w.h);
  master_ | result_;
  return Finished;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::trapezoid::params p = suite::trapezoid::read(o);
  const auto w = static_cast<std::size_t>(p.workers);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<master> boss;
  std::vector<std::unique_ptr<worker>> crew;
  start_msg start;
  const double secs = suite::seconds([&] {
    boss = std::make_unique<master>(system, p.pieces);
    crew.reserve(w);
    for (std::size_t i = 0; i < w; ++i) crew.push_back(std::make_unique<worker>(system, *boss, i));
    boss->direct(crew);
    *boss | start;
    system.await_quiescence();
  });

  suite::check(boss->finished(), "the master did not collect every area");
  for (const auto& c : crew) suite::check(c->finished(), "a worker did not finish");
  for (const std::size_t i : {std::size_t{0}, w / 2, w - 1}) {
    const work_msg& job = boss->work()[i];
    // The same operations in the same order: equal, not merely close.
    suite::check(boss->areas()[i] == area(job.l, job.r, job.h),
                 "worker " + std::to_string(i) + " computed a wrong area");
  }
  suite::check(std::isfinite(boss->total()), "the total area is not finite");
  const std::uint64_t delivered = boss->received() + w;  // each worker received its Work
  suite::check(boss->received() == 1 + w,
               "the master received " + std::to_string(boss->received()) + " messages");
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  // Computing f is the whole cost: a time per message would mean nothing.
  suite::report(o, "trapezoid", "tact", secs, 0);
}
