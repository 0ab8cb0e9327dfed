// bursts: message-bound work that comes in bursts with idle spells between
// them, as requests, frames or a timer's rounds come. Not a Savina
// workload. A token goes round a ring of `actors` actors for `hops` hops
// (a burst: one message in flight at a time, as in thread_ring); once it
// has made them, main waits `idle_us` with nothing to run, then sends the
// token off again, `bursts` times; then an exit token goes once around
// the ring. In all
//   actors Data + bursts × hops Ping + actors Exit.
//
// Parameters (full / --quick):
//   --actors   actors in the ring (100 / 100)
//   --hops     hops of the token per burst (100,000 / 20,000)
//   --bursts   bursts (40 / 5)
//   --idle_us  idle time between two bursts, in µs (5,000 / 5,000)
// and, tact's alone (as in latency):
//   --queues          system_config::queues; 0: the engine's default,
//                     which is one queue with one worker (0)
//   --gulp_budget_us  system_config::gulp_budget in µs; 0: none, -1: the
//                     engine's default (-1)
//
// It measures what a scheduler that adapts to its work does when the work
// stops and starts again: the time is the bursts' own, each from the
// token's send to main seeing the burst done (quiescence here, the ring's
// last actor telling main in CAF), summed; the idle spells, the ring's
// creation and its exit are not timed. Each burst runs well under
// 10 ms: an engine that weighs its work over the idle spells as well, or
// that starts every burst over, runs much of it as it would after a
// pause.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

class ring_actor;

struct data_msg : tact::message {
  ring_actor* next = nullptr;
};
struct ping_token : tact::message {
  std::int64_t hops_left = 0;
};
struct exit_token : tact::message {
  std::int64_t exits_left = 0;  // actors still to be told after the receiver
};

class ring_actor final : public tact::actor {
 public:
  explicit ring_actor(tact::actor_system& system) : actor{system} {}

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(data_msg& m) {
    ++received_;
    next_ = m.next;
    return Nodelete;
  }
  tact::allocation receive(ping_token& t) {
    ++received_;
    if (--t.hops_left > 0) *next_ | t;
    return Nodelete;
  }
  tact::allocation receive(exit_token& t) {
    ++received_;
    if (t.exits_left > 0) {
      --t.exits_left;
      *next_ | t;
    }
    return Finished;
  }

 private:
  ring_actor* next_ = nullptr;
  std::uint64_t received_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::bursts::params p = suite::bursts::read(o);

  tact::system_config config{.workers = o.threads()};
  if (const auto queues = o.param("queues", 0, 0); queues > 0)
    config.queues = static_cast<std::uint32_t>(queues);
  if (const auto budget = o.param("gulp_budget_us", -1, -1); budget >= 0)
    config.gulp_budget = std::chrono::microseconds{budget};
  tact::actor_system system{config};
  std::vector<std::unique_ptr<ring_actor>> ring;
  std::vector<data_msg> data(static_cast<std::size_t>(p.actors));
  for (std::size_t i = 0; i < data.size(); ++i)
    ring.push_back(std::make_unique<ring_actor>(system));
  for (std::size_t i = 0; i < ring.size(); ++i) {
    data[i].next = ring[(i + 1) % ring.size()].get();
    *ring[i] | data[i];
  }
  system.await_quiescence();
  ping_token ping;
  double secs = 0;
  for (std::int64_t b = 0; b < p.bursts; ++b) {
    std::this_thread::sleep_for(std::chrono::microseconds{p.idle_us});
    ping.hops_left = p.hops;
    secs += suite::seconds([&] {
      *ring[0] | ping;
      system.await_quiescence();
    });
    suite::check(ping.hops_left == 0, "a burst stopped early");
  }
  exit_token exit;
  exit.exits_left = p.actors - 1;
  *ring[0] | exit;
  system.await_quiescence();

  std::uint64_t delivered = 0;
  for (const auto& a : ring) {
    suite::check(a->finished(), "an actor of the ring did not exit");
    delivered += a->received();
  }
  const std::uint64_t expected = suite::bursts::messages(p);
  suite::check(exit.exits_left == 0, "the exit token stopped early");
  suite::check(delivered == expected, "the ring received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "bursts", "tact", secs, static_cast<std::uint64_t>(p.bursts * p.hops));
}
