// transactional ping_pong, tact: ping_pong's workload and Savina protocol
// (ping_pong/tact.cpp documents it) on two transactional actors. Each
// keeps its count in its behaviour: ping becomes ping(left - 1) for every
// SendPing it sends, pong becomes pong(pongs + 1) for every one it
// answers, so every round trip is three dispatches, three commits and two
// becomes, each become allocating its new behaviour. SendPing carries the
// pinger first, the customer its SendPong goes to. When pong stops it
// hands its count to main.
//
// Both actors are parallel-mode: only one message is ever in flight, so
// their becomes cannot collide, and a parallel actor's send stays on the
// sending worker's queue, keeping the chain on one core as the classic
// program's does (a serialized actor's would cross to its home queue).
//
// Parameters (full / --quick): as ping_pong (--pings 2,000,000 / 100,000).
//
// Timed: from the start message to quiescence. Checked: pong answered
// `pings` SendPings, and 3 pings + 1 messages committed (+ 1, the report to
// main), none rolled back or unmatched.
#include <cstdint>
#include <optional>
#include <string>

#include <tact/transactional.hpp>

#include "../ping_pong/params.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

struct start {};
struct ping {};  // ping to itself: send the next SendPing
struct stop {};
struct send_ping {};
struct send_pong {};

tx::behaviour pong_actor(std::uint64_t pongs, const tx::actor_ref& report) {
  return {
      [pongs, report](const tx::actor_ref& pinger, send_ping) {
        tx::send(pinger, send_pong{});
        tx::become(pong_actor(pongs + 1, report));
      },
      [pongs, report](stop) { tx::send(report, pongs); },
  };
}

tx::behaviour ping_actor(std::uint64_t left, const tx::actor_ref& pong);

// Staged by ping's start and Ping handlers.
void send_next(std::uint64_t left, const tx::actor_ref& pong) {
  tx::send(pong, tx::self(), send_ping{});
  tx::become(ping_actor(left - 1, pong));
}

tx::behaviour ping_actor(std::uint64_t left, const tx::actor_ref& pong) {
  return {
      [left, pong](start) { send_next(left, pong); },
      [left, pong](ping) { send_next(left, pong); },
      [left, pong](send_pong) {
        if (left > 0)
          tx::send(tx::self(), ping{});
        else
          tx::send(pong, stop{});
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::ping_pong::pings(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::optional<std::uint64_t> pongs;
  const tx::actor_ref report = tx::spawn(system, {[&pongs](std::uint64_t p) { pongs = p; }});
  tx::actor_ref ping = tx::spawn(system, ping_actor(n, tx::spawn(system, pong_actor(0, report))));
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    tx::send(ping, start{});
    system.await_quiescence();
  });

  const std::uint64_t messages = suite::ping_pong::messages(n);
  suite::check(pongs == n, "pong answered " + std::to_string(pongs.value_or(0)) + " of " +
                               std::to_string(n) + " pings");
  suite::tx::check_commits(system, before, messages + 1);
  ping.reset();
  system.stop();
  suite::report(o, "tx_ping_pong", "tact", secs, messages);
}
