// latency for CAF 0.17: the same protocol, parameters and checks as
// tact.cpp (which documents the workload), written as CAF event-based
// actors, with main pinging through a caf::scoped_actor (request, then
// receive).
//
// CAF cannot place an actor on a worker: the ponger runs wherever CAF's
// scheduler puts it, not necessarily on the sink's worker (with one thread
// there is only one). Its actors also run each mailbox to the end by
// default (scheduler.max-throughput is unbounded), which is what this
// workload measures, as is.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

using start_atom = caf::atom_constant<caf::atom("start")>;
using go_on_atom = caf::atom_constant<caf::atom("goon")>;
using flood_atom = caf::atom_constant<caf::atom("flood")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;

// What the actors leave behind for main. counted_at is written before
// counted_all is set; the counts are written by each actor as it quits and
// read after await_all_actors_done().
struct outcome {
  std::atomic<bool> counted_all{false};
  clock_type::time_point counted_at{};
  std::uint64_t counted = 0;
  std::uint64_t flooder_received = 0;
  std::uint64_t ponger_received = 0;
};

// A send time as it travels in a message.
std::int64_t ticks(clock_type::time_point t) { return t.time_since_epoch().count(); }
clock_type::time_point from_ticks(std::int64_t n) {
  return clock_type::time_point{clock_type::duration{n}};
}

caf::behavior sink_actor(caf::stateful_actor<std::uint64_t>* self, std::uint64_t expected,
                         outcome* out) {
  return {
      [=](flood_atom) {
        if (++self->state == expected) {
          out->counted_at = clock_type::now();
          out->counted_all.store(true, std::memory_order_release);
        }
      },
      [=](stop_atom) {
        out->counted = self->state;
        self->quit();
      },
  };
}

struct flooder_state {
  std::uint64_t left = 0;
  std::uint64_t received = 0;
};

caf::behavior flooder_actor(caf::stateful_actor<flooder_state>* self, caf::actor sink,
                            suite::latency::parameters p, outcome* out) {
  self->state.left = p.messages;
  auto send_burst = [=] {
    ++self->state.received;
    const std::uint64_t n = std::min(p.burst, self->state.left);
    for (std::uint64_t i = 0; i < n; ++i) self->send(sink, flood_atom::value);
    self->state.left -= n;
    if (self->state.left > 0) {
      self->send(self, go_on_atom::value);
      return;
    }
    out->flooder_received = self->state.received;
    self->quit();
  };
  return {
      [=](start_atom) { send_burst(); },
      [=](go_on_atom) { send_burst(); },
  };
}

caf::behavior ponger_actor(caf::stateful_actor<std::uint64_t>* self, outcome* out) {
  return {
      [=](ping_atom, std::uint64_t seq, std::int64_t sent) {
        ++self->state;
        return caf::make_message(pong_atom::value, seq, sent);
      },
      [=](stop_atom) {
        out->ponger_received = self->state;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::latency::parameters p = suite::latency::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  outcome out;
  auto sink = system.spawn(sink_actor, p.messages, &out);
  auto ponger = system.spawn(ponger_actor, &out);
  auto flooder = system.spawn(flooder_actor, sink, p, &out);

  double secs = 0;
  std::uint64_t pings = 0, replies = 0, out_of_turn = 0;
  std::vector<double> reply_us;
  {
    caf::scoped_actor self{system};
    const auto started = clock_type::now();
    caf::anon_send(flooder, start_atom::value);
    auto next = started;
    while (!out.counted_all.load(std::memory_order_acquire) || pings < p.min_pings) {
      std::this_thread::sleep_until(next);
      const auto sent = clock_type::now();
      next = sent + p.interval;
      ++pings;
      self->request(ponger, caf::infinite, ping_atom::value, pings, ticks(sent))
          .receive(
              [&](pong_atom, std::uint64_t seq, std::int64_t sent_ticks) {
                const auto now = clock_type::now();
                if (seq != replies + 1) ++out_of_turn;
                ++replies;
                reply_us.push_back(
                    std::chrono::duration<double, std::micro>(now - from_ticks(sent_ticks))
                        .count());
              },
              [&](caf::error& e) { suite::fail("a ping failed: " + system.render(e)); });
    }
    secs = std::chrono::duration<double>(out.counted_at - started).count();
    self->send(sink, stop_atom::value);
    self->send(ponger, stop_atom::value);
  }
  system.await_all_actors_done();

  suite::check(out.counted == p.messages, "the sink counted " + std::to_string(out.counted) +
                                              " of " + std::to_string(p.messages) +
                                              " flood messages");
  suite::check(out.flooder_received == suite::latency::bursts(p),
               "the flooder ran " + std::to_string(out.flooder_received) + " bursts, expected " +
                   std::to_string(suite::latency::bursts(p)));
  suite::check(out.ponger_received == pings && replies == pings && out_of_turn == 0,
               std::to_string(pings) + " pings: the ponger got " +
                   std::to_string(out.ponger_received) + ", " + std::to_string(replies) +
                   " replies came back, " + std::to_string(out_of_turn) + " of them out of turn");
  suite::report(o, "latency", "caf", secs, p.messages, suite::latency_fields(reply_us));
}
