// fork_join_creation (Savina's "fjcreate", no. 5 of the list in the CAF locality
// thesis, 6.2.1): main creates `actors` actors one after another and sends each one
// message; an actor does a small computation (Savina's performComputation,
// sin squared) and exits. It measures the cost of an actor's whole life:
// creation, first message, termination and reclamation.
//
// Savina's protocol, kept as is; messages = actors. Each actor also counts
// its positive result on one shared atomic counter (relaxed), which is how
// the run is checked without keeping the actors: CAF's version does the
// same.
//
// Parameters (full / --quick):
//   --actors  actors created (1,500,000 / 40,000). Savina's default is
//             40,000; the CAF locality thesis (6.2.1) uses
//             4,000,000.
//
// Actors are made with system.spawn (a `new`) and return Delete after their
// message, so the system frees them on the worker that ran them. Main sends
// one message object to all of them: tact never copies a message and this
// one carries nothing. The timed region covers all creations and sends and
// the run to quiescence.
#include <atomic>
#include <cstdint>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

struct work : tact::message {};

class fork_join_actor final : public tact::actor {
 public:
  explicit fork_join_actor(std::atomic<std::uint64_t>& positive) : positive_{positive} {}

  tact::allocation receive(work&) {
    if (suite::savina::perform_computation(suite::savina::theta) > 0)
      positive_.fetch_add(1, std::memory_order_relaxed);
    return Delete;
  }

 private:
  std::atomic<std::uint64_t>& positive_;
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::fork_join_creation::actors(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::atomic<std::uint64_t> positive{0};
  work message;
  const std::uint64_t before = system.stats().total.messages_processed;
  const double secs = suite::seconds([&] {
    for (std::uint64_t i = 0; i < n; ++i) system.spawn<fork_join_actor>(positive) | message;
    system.await_quiescence();
  });

  const std::uint64_t delivered = system.stats().total.messages_processed - before;
  suite::check(positive.load() == n, std::to_string(positive.load()) + " of " + std::to_string(n) +
                                         " actors computed a result");
  suite::check(delivered == n, "the system delivered " + std::to_string(delivered) +
                                   " messages, expected " + std::to_string(n));
  system.stop();
  suite::report(o, "fork_join_creation", "tact", secs, delivered);
}
