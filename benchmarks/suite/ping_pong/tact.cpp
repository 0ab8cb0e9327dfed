// ping_pong (Savina's "pingpong", no. 1 of the list in the CAF locality thesis, 6.2.1): two
// actors pass a message back and forth. Only one message is in flight at any
// time, so this measures the latency of one send and dispatch, with nothing
// to run in parallel: a second worker can only get in the way (a wake-up, or
// a steal that moves an actor away from its partner's cache).
//
// Savina's protocol, kept as is: ping sends SendPing to pong, pong answers
// SendPong, and ping, if pings are left, sends itself a Ping message that
// makes it send the next SendPing. The last SendPong makes ping send Stop
// to pong; both exit. Per round three messages; in all
//   1 start + pings SendPing + pings SendPong + (pings - 1) Ping + 1 Stop.
//
// Parameters (full / --quick):
//   --pings   round trips (2,000,000 / 100,000). Savina's default is 40,000;
//             the CAF locality thesis (section 6.2.1) uses
//             2,000,000.
//
// The timed region is the run from the start message to quiescence; the two
// actors are made before it (creating two actors costs nothing measurable).
// Each actor owns the one message it sends and re-sends it every round:
// tact never copies a message, and each is received before it is sent
// again, so the run allocates nothing.
#include <cstdint>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

class ping_actor;
class pong_actor;

struct start_msg : tact::message {};
struct ping_msg : tact::message {};  // ping to itself: send the next SendPing
struct stop_msg : tact::message {};
struct send_ping : tact::message {
  ping_actor* sender = nullptr;
};
struct send_pong : tact::message {
  pong_actor* sender = nullptr;
};

class pong_actor final : public tact::actor {
 public:
  explicit pong_actor(tact::actor_system& system) : actor{system} { pong_.sender = this; }

  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t pongs() const noexcept { return pongs_; }

  inline tact::allocation receive(send_ping& m);
  tact::allocation receive(stop_msg&) {
    ++received_;
    return Finished;
  }

 private:
  send_pong pong_;
  std::uint64_t pongs_ = 0;
  std::uint64_t received_ = 0;
};

class ping_actor final : public tact::actor {
 public:
  ping_actor(tact::actor_system& system, pong_actor& pong, std::uint64_t pings)
      : actor{system}, pong_{pong}, pings_left_{pings} {
    send_ping_.sender = this;
  }

  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t pings_left() const noexcept { return pings_left_; }

  tact::allocation receive(start_msg&) {
    ++received_;
    return send_next();
  }
  tact::allocation receive(ping_msg&) {
    ++received_;
    return send_next();
  }
  tact::allocation receive(send_pong&) {
    ++received_;
    if (pings_left_ > 0) {
      *this | ping_;
      return Nodelete;
    }
    pong_ | stop_;
    return Finished;
  }

 private:
  tact::allocation send_next() {
    pong_ | send_ping_;
    --pings_left_;
    return Nodelete;
  }

  pong_actor& pong_;
  std::uint64_t pings_left_;
  std::uint64_t received_ = 0;
  send_ping send_ping_;
  ping_msg ping_;
  stop_msg stop_;
};

tact::allocation pong_actor::receive(send_ping& m) {
  ++received_;
  ++pongs_;
  *m.sender | pong_;
  return Nodelete;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::ping_pong::pings(o);

  tact::actor_system system{{.workers = o.threads()}};
  pong_actor pong{system};
  ping_actor ping{system, pong, n};
  start_msg start;
  const double secs = suite::seconds([&] {
    ping | start;
    system.await_quiescence();
  });

  const std::uint64_t messages = ping.received() + pong.received();
  suite::check(ping.finished() && pong.finished(), "an actor did not finish");
  suite::check(
      ping.pings_left() == 0 && pong.pongs() == n,
      "pong answered " + std::to_string(pong.pongs()) + " of " + std::to_string(n) + " pings");
  const std::uint64_t expected = suite::ping_pong::messages(n);
  suite::check(messages == expected, "the actors received " + std::to_string(messages) +
                                         " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == messages,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "ping_pong", "tact", secs, messages);
}
