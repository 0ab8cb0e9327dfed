// static send, tact (Cforall thesis, "Message Sends"): one actor re-sends one
// preallocated message to itself (workloads/static_send.hpp). Neither is
// allocated per send, so the send and dispatch paths are the whole cost.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   messages   sends in the run, at least 1      20,000,000   200,000
//
// Timed: from the first send until the system is quiescent again. Checked:
// the actor received exactly `messages`, and the system delivered exactly
// that many.
#include <cstdint>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"
#include "workloads/static_send.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t messages = suite::static_send::messages(o);

  tact::actor_system system{{.workers = o.threads()}};
  tact::bench::echo target{system};
  tact::bench::ping message;
  target.limit = messages;
  const double secs = suite::seconds([&] {
    target | message;
    system.await_quiescence();
  });

  suite::check(target.received == target.limit,
               "the actor received " + std::to_string(target.received) + " of " +
                   std::to_string(messages) + " messages");
  suite::check(system.stats().total.messages_processed == target.limit,
               "the system counted " + std::to_string(system.stats().total.messages_processed) +
                   " deliveries, the actor " + std::to_string(target.received));
  target | tact::finished_msg;
  system.stop();
  suite::report(o, "static_send", "tact", secs, target.received);
}
