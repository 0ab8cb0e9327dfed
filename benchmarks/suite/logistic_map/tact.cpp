// logistic_map (Savina's "logmap", no. 15 of the list in the CAF locality thesis, 6.2.1):
// `series` series of the logistic map x' = r x (1 - x), each advanced `terms`
// times. A master sends every series worker `terms` NextTerm requests in one
// burst; for each, the worker asks its rate computer for the next term and
// must wait for the answer before it handles the next request, which waits in
// its mailbox meanwhile. It measures a synchronous request/response pattern
// under a backlog: a few actors, each with a long queue, that can only
// progress one round trip at a time (so at most `series` round trips run in
// parallel).
//
// Savina's protocol (the manual-stash variant), kept as is: worker i starts
// at i * 0.0025 and its computer uses rate 3.46 + i * 0.0025; after the
// burst the master sends each worker GetTerm, which a worker answers with
// its current term once every NextTerm before it is done; the master then
// stops everyone. In all
//   1 start + series terms NextTerm + 2 series terms (Compute and Result)
//   + series GetTerm + series Result + 2 series Stop.
// Each final term is a fixed sequence of floating-point operations, so main
// recomputes every series and checks the workers' terms bit for bit.
//
// Parameters (full / --quick):
//   --series  series, workers and computers (10 / 10), Savina's default.
//   --terms   terms per series (100,000 / 5,000). Savina's default, and
//             the CAF locality study's, is 25,000.
//
// NextTerm and GetTerm carry nothing, so the master sends one object of
// each to everyone (tact never copies a message). A worker that is waiting
// for its computer keeps count of the NextTerms that arrive and remembers
// a GetTerm, and works them off in order when the answer comes: that is
// all Savina's stash holds. The Compute request is answered in the same
// object (tact's request-and-reply-in-one-object idiom). The timed region
// covers creating the actors, the burst and the run to quiescence.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using suite::logistic_map::increment;
using suite::logistic_map::next_term;
using suite::logistic_map::start_rate;

class worker;
class master;

struct start_msg : tact::message {};
struct stop_msg : tact::message {};
struct next_term_msg : tact::message {};
struct get_term_msg : tact::message {};
// A Compute request, and then its Result, in one object.
struct compute_msg : tact::message {
  double term = 0;
  worker* sender = nullptr;
};
struct result_msg : tact::message {
  std::size_t series = 0;
  double term = 0;
};

class rate_computer final : public tact::actor {
 public:
  rate_computer(tact::actor_system& system, double rate) : actor{system}, rate_{rate} {}

  std::uint64_t received() const noexcept { return received_; }

  inline tact::allocation receive(compute_msg& m);
  tact::allocation receive(stop_msg&) {
    ++received_;
    return Finished;
  }

 private:
  const double rate_;
  std::uint64_t received_ = 0;
};

class worker final : public tact::actor {
 public:
  worker(tact::actor_system& system, master& boss, rate_computer& computer, std::size_t series,
         double start)
      : actor{system}, master_{boss}, computer_{computer}, term_{start} {
    compute_.sender = this;
    result_.series = series;
  }

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(next_term_msg&) {
    ++received_;
    if (waiting_)
      ++pending_next_;
    else
      request_next();
    return Nodelete;
  }
  tact::allocation receive(get_term_msg&) {
    ++received_;
    if (waiting_)
      pending_get_ = true;
    else
      report();
    return Nodelete;
  }
  // The computer's answer to our Compute.
  tact::allocation receive(compute_msg& m) {
    ++received_;
    waiting_ = false;
    term_ = m.term;
    if (pending_next_ > 0) {
      --pending_next_;
      request_next();
    } else if (pending_get_) {
      pending_get_ = false;
      report();
    }
    return Nodelete;
  }
  tact::allocation receive(stop_msg&) {
    ++received_;
    return Finished;
  }

 private:
  void request_next() {
    compute_.term = term_;
    computer_ | compute_;
    waiting_ = true;
  }
  inline void report();

  master& master_;
  rate_computer& computer_;
  double term_;
  bool waiting_ = false;
  std::uint64_t pending_next_ = 0;  // NextTerms that arrived while waiting
  bool pending_get_ = false;        // a GetTerm arrived while waiting
  std::uint64_t received_ = 0;
  compute_msg compute_;
  result_msg result_;
};

class master final : public tact::actor {
 public:
  master(tact::actor_system& system, std::int64_t terms) : actor{system}, terms_{terms} {}

  // Before the start message.
  void direct(std::vector<std::unique_ptr<rate_computer>>& computers,
              std::vector<std::unique_ptr<worker>>& workers) {
    computers_ = &computers;
    workers_ = &workers;
    terms_seen_.resize(workers.size());
  }

  std::uint64_t received() const noexcept { return received_; }
  const std::vector<double>& terms() const noexcept { return terms_seen_; }

  tact::allocation receive(start_msg&) {
    ++received_;
    for (std::int64_t i = 0; i < terms_; ++i)
      for (auto& w : *workers_) *w | next_;
    for (auto& w : *workers_) *w | get_;
    return Nodelete;
  }
  tact::allocation receive(result_msg& m) {
    ++received_;
    terms_seen_[m.series] = m.term;
    if (++results_ < workers_->size()) return Nodelete;
    for (auto& c : *computers_) *c | stop_;
    for (auto& w : *workers_) *w | stop_;
    return Finished;
  }

 private:
  const std::int64_t terms_;
  std::vector<std::unique_ptr<rate_computer>>* computers_ = nullptr;
  std::vector<std::unique_ptr<worker>>* workers_ = nullptr;
  std::vector<double> terms_seen_;
  std::size_t results_ = 0;
  std::uint64_t received_ = 0;
  next_term_msg next_;
  get_term_msg get_;
  stop_msg stop_;
};

tact::allocation rate_computer::receive(compute_msg& m) {
  ++received_;
  m.term = next_term(m.term, rate_);
  *m.sender | m;
  return Nodelete;
}

void worker::report() {
  result_.term = term_;
  master_ | result_;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::logistic_map::params p = suite::logistic_map::read(o);
  const auto s = static_cast<std::size_t>(p.series);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<master> boss;
  std::vector<std::unique_ptr<rate_computer>> computers;
  std::vector<std::unique_ptr<worker>> workers;
  start_msg start;
  const double secs = suite::seconds([&] {
    boss = std::make_unique<master>(system, p.terms);
    for (std::size_t i = 0; i < s; ++i)
      computers.push_back(
          std::make_unique<rate_computer>(system, start_rate + static_cast<double>(i) * increment));
    for (std::size_t i = 0; i < s; ++i)
      workers.push_back(std::make_unique<worker>(system, *boss, *computers[i % s], i,
                                                 static_cast<double>(i) * increment));
    boss->direct(computers, workers);
    *boss | start;
    system.await_quiescence();
  });

  std::uint64_t delivered = boss->received();
  suite::check(boss->finished(), "the master did not finish");
  for (std::size_t i = 0; i < s; ++i) {
    suite::check(computers[i]->finished() && workers[i]->finished(), "an actor did not stop");
    delivered += computers[i]->received() + workers[i]->received();
    const double term = suite::logistic_map::final_term(p, i);
    suite::check(term == boss->terms()[i], "series " + std::to_string(i) + " ended at " +
                                               std::to_string(boss->terms()[i]) + ", expected " +
                                               std::to_string(term));
  }
  const std::uint64_t expected = suite::logistic_map::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "logistic_map", "tact", secs, delivered);
}
