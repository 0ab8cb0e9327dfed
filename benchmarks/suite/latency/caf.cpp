// latency for CAF 0.17: the same protocol, parameters and checks as
// tact.cpp (which documents the workload), written as CAF event-based
// actors. The pinger's clock is a delayed_send to itself, sent again at
// each tick (CAF 0.17 has no periodic timer), so a tick that its worker
// runs late delays the next one too.
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
using tick_atom = caf::atom_constant<caf::atom("tick")>;

// What the actors leave behind for main. counted_at is written before
// counted_all is set; the counts are written by each actor as it quits and
// read after await_all_actors_done().
struct outcome {
  std::atomic<bool> counted_all{false};
  clock_type::time_point counted_at{};
  std::uint64_t counted = 0;
  std::uint64_t flooder_received = 0;
  std::uint64_t ponger_received = 0;
  // The pinger's, written before done is set.
  std::uint64_t pings = 0;
  std::uint64_t replies = 0;
  std::uint64_t out_of_turn = 0;
  std::vector<double> reply_us;
  std::atomic<bool> done{false};
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

struct pinger_state {
  std::uint64_t pings = 0;
  std::uint64_t replies = 0;
  std::uint64_t out_of_turn = 0;
  bool due = false;
  std::vector<double> reply_us;
};

caf::behavior pinger_actor(caf::stateful_actor<pinger_state>* self, caf::actor ponger,
                           suite::latency::parameters p, outcome* out) {
  auto ping = [=] {
    self->state.due = false;
    self->send(ponger, ping_atom::value, ++self->state.pings, ticks(clock_type::now()));
  };
  auto tick_later = [=] {
    if (p.interval.count() > 0) self->delayed_send(self, p.interval, tick_atom::value);
  };
  return {
      [=](start_atom) {
        tick_later();
        ping();
      },
      [=](tick_atom) {
        tick_later();
        if (self->state.replies < self->state.pings)
          self->state.due = true;
        else
          ping();
      },
      [=](pong_atom, std::uint64_t seq, std::int64_t sent) {
        const auto now = clock_type::now();
        auto& st = self->state;
        if (seq != st.replies + 1) ++st.out_of_turn;
        ++st.replies;
        st.reply_us.push_back(
            std::chrono::duration<double, std::micro>(now - from_ticks(sent)).count());
        if (out->counted_all.load(std::memory_order_acquire) && st.replies >= p.min_pings) {
          out->pings = st.pings;
          out->replies = st.replies;
          out->out_of_turn = st.out_of_turn;
          out->reply_us = std::move(st.reply_us);
          out->done.store(true, std::memory_order_release);
          out->done.notify_all();
          self->quit();  // a tick still on its way finds no one
        } else if (st.due || p.interval.count() == 0) {
          ping();
        }
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

  auto pinger = system.spawn(pinger_actor, ponger, p, &out);

  const auto started = clock_type::now();
  caf::anon_send(flooder, start_atom::value);
  caf::anon_send(pinger, start_atom::value);
  out.done.wait(false, std::memory_order_acquire);
  const double secs = std::chrono::duration<double>(out.counted_at - started).count();
  caf::anon_send(sink, stop_atom::value);
  caf::anon_send(ponger, stop_atom::value);
  system.await_all_actors_done();

  suite::check(out.counted == p.messages, "the sink counted " + std::to_string(out.counted) +
                                              " of " + std::to_string(p.messages) +
                                              " flood messages");
  suite::check(out.flooder_received == suite::latency::bursts(p),
               "the flooder ran " + std::to_string(out.flooder_received) + " bursts, expected " +
                   std::to_string(suite::latency::bursts(p)));
  suite::check(out.ponger_received == out.pings && out.replies == out.pings &&
                   out.out_of_turn == 0,
               std::to_string(out.pings) + " pings: the ponger got " +
                   std::to_string(out.ponger_received) + ", " + std::to_string(out.replies) +
                   " replies came back, " + std::to_string(out.out_of_turn) +
                   " of them out of turn");
  suite::report(o, "latency", "caf", secs, p.messages, suite::latency_fields(out.reply_us));
}
