// fork_join_throughput (Savina's "fjthrput", no. 4 of the list in the CAF locality
// thesis, 6.2.1): main sends one message to each of `actors` actors, and does so
// `messages` times; each actor does a small computation per message (Savina's
// performComputation, sin squared) and exits after its `messages`-th. It
// measures how fast messages from one outside sender fan out to many actors
// and how well the workers share those actors: every actor can run in
// parallel with every other.
//
// Savina's protocol, kept as is; messages = actors * messages.
//
// Parameters (full / --quick):
//   --actors    receiving actors (360 / 60). Savina's default is 60; the
//               CAF locality thesis (6.2.1) uses 360.
//   --messages  messages per actor (20,000 / 5,000). Savina's default is
//               10,000, the CAF locality study's 60,000.
//
// Main sends one message object to every actor, every round: tact never
// copies a message and this one carries nothing, so one object may be
// queued any number of times. The timed region covers creating the actors,
// all the sends, and the run to quiescence.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

struct work : tact::message {};

class throughput_actor final : public tact::actor {
 public:
  throughput_actor(tact::actor_system& system, std::uint64_t messages)
      : actor{system}, messages_{messages}, theta_{suite::savina::theta} {}

  std::uint64_t processed() const noexcept { return processed_; }
  // Computations whose result was positive, as Savina demands of each.
  std::uint64_t positive() const noexcept { return positive_; }

  tact::allocation receive(work&) {
    ++processed_;
    if (suite::savina::perform_computation(theta_) > 0) ++positive_;
    return processed_ == messages_ ? Finished : Nodelete;
  }

 private:
  const std::uint64_t messages_;
  const double theta_;
  std::uint64_t processed_ = 0;
  std::uint64_t positive_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::fork_join_throughput::params p = suite::fork_join_throughput::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::vector<std::unique_ptr<throughput_actor>> pool;
  work message;
  const double secs = suite::seconds([&] {
    pool.reserve(static_cast<std::size_t>(p.actors));
    for (std::int64_t i = 0; i < p.actors; ++i)
      pool.push_back(std::make_unique<throughput_actor>(system, p.messages));
    for (std::uint64_t m = 0; m < p.messages; ++m)
      for (auto& a : pool) *a | message;
    system.await_quiescence();
  });

  std::uint64_t delivered = 0;
  for (const auto& a : pool) {
    suite::check(a->finished() && a->processed() == p.messages && a->positive() == p.messages,
                 "an actor processed " + std::to_string(a->processed()) + " of " +
                     std::to_string(p.messages) + " messages (" + std::to_string(a->positive()) +
                     " positive results)");
    delivered += a->processed();
  }
  suite::check(delivered == p.messages * static_cast<std::uint64_t>(p.actors),
               "wrong number of messages delivered");
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "fork_join_throughput", "tact", secs, delivered);
}
