// dynamic send, tact (Cforall thesis, "Message Sends"): every send goes to a new
// actor with a new message. Each actor of a chain, on its message, creates
// the next actor and a message for it, sends it, and deletes itself; the
// executor deletes each message after its delivery. So a step costs an
// actor and a message allocated and freed, on top of the send.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   actors   length of the chain (actors created, messages sent),
//            at least 1                          2,000,000    50,000
//
// Timed: from creating the first actor until the system is quiescent.
// Checked: the message reached the last actor after `actors` hops, and the
// system counted `actors` actors created, finished and messages delivered.
#include <cstdint>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

// Made with new and deleted by the executor after its delivery.
struct hop : tact::message {
  explicit hop(std::uint64_t count) : tact::message{tact::allocation::Delete}, count{count} {}
  std::uint64_t count;  // actors reached, this message's receiver included
};

// Made with new, from the previous link's behaviour (so it joins that
// system); deletes itself after its one message.
class chain_link final : public tact::actor {
 public:
  chain_link(std::uint64_t left, std::uint64_t& reached) : left_{left}, reached_{reached} {}

  tact::allocation receive(hop& m) {
    if (left_ > 0) {
      auto& next = *new chain_link{left_ - 1, reached_};
      next | *new hop{m.count + 1};
    } else {
      reached_ = m.count;
    }
    return Delete;
  }

 private:
  const std::uint64_t left_;  // links still to create after this one
  std::uint64_t& reached_;    // written by the last link only
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t expected = suite::dynamic_send::actors(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::uint64_t reached = 0;
  const double secs = suite::seconds([&] {
    system.spawn<chain_link>(expected - 1, reached) | *new hop{1};
    system.await_quiescence();
  });

  const tact::worker_stats totals = system.stats().total;
  suite::check(reached == expected, "the last actor was reached after " + std::to_string(reached) +
                                        " of " + std::to_string(expected) + " hops");
  suite::check(totals.actors_created == expected && totals.actors_finished == expected &&
                   totals.messages_processed == expected,
               "the system created " + std::to_string(totals.actors_created) + ", finished " +
                   std::to_string(totals.actors_finished) + " and delivered " +
                   std::to_string(totals.messages_processed) + ", expected " +
                   std::to_string(expected) + " of each");
  system.stop();
  suite::report(o, "dynamic_send", "tact", secs, expected);
}
