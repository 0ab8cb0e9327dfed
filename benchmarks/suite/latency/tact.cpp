// latency: how long a message waits on a worker that a flood keeps busy
// (bounded delivery time, as the reactor scheduling paper defines it). Not
// a Savina workload.
//
// A flooder sends `messages` small messages to a sink that only counts
// them, in bursts: each run of its behaviour sends `burst` of them and one
// message to itself to carry on, so the flood comes as fast as the
// flooder can send and the sink's queue holds whatever the sink has not
// drained yet. Meanwhile a pinger pings a ponger that runs on the sink's
// worker and answers at once: one ping at a time, a ping every
// `interval_us` (or at once, when the last reply took longer), each
// carrying its send time. The pinger's clock is a tact::send_every timer
// (none when `interval_us` is 0: the next ping goes with the last reply).
// It goes on until the sink has counted the whole flood and at least
// `min_pings` pings have been answered. In all
//   bursts (1 start + bursts − 1 to itself) + messages flood + 2 × pings
//   + the pinger's start and ticks.
//
// Parameters (full / --quick):
//   --messages     flood messages (10,000,000 / 500,000)
//   --burst        flood messages per run of the flooder (1,000)
//   --interval_us  from one ping's send to the next's (1,000)
//   --min_pings    pings at least (20)
//   --same_queue   1: the ponger on the sink's own queue (tact::next_to),
//                  where a ping waits behind every flood message queued
//                  before it, whatever the worker does (0)
//   --gulp_budget_us  system_config::gulp_budget in µs; 0: none, -1: the
//                  engine's default (-1)
//   --queues       system_config::queues; 0: the engine's default, which is
//                  one queue with one worker (0)
//
// It measures the reply time of each ping (reply received − ping sent,
// both in the pinger's behaviour), reported as p50_us, p99_us and max_us,
// and the flood's own time: `seconds` runs from the start message to the
// sink counting the last flood message, ns_per_msg is over the flood
// messages alone.
//
// Placement. The sink and the ponger start on worker 0, each on a queue of
// its own (by default the ponger is not next to the sink: on the sink's
// queue a ping would wait behind the backlog whatever the scheduler does,
// and this workload is about whether a worker gives another queue a turn);
// the flooder and the pinger start on the last worker, so a reply crosses
// a flooded worker too. With one worker the system has one queue (the
// default configuration), so the four share it. Stealing may still move
// queues between workers once the run is under way.
//
// Pinger and ponger are both actors of the pool, so the reply time is the
// engine's alone. A reply to a thread outside the pool (main, a GUI thread)
// also waits for the operating system to run that thread, which on a
// machine whose cores the workers keep busy takes longer than delivery
// itself (docs/performance.md, "Delivery time"). Every message is one
// object sent again and again: the flood message (tact never copies a
// message, so one object may be queued any number of times), the tick,
// and the ping and its reply, each of which is answered before it is sent
// again.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

class pinger_actor;

struct start_msg : tact::message {};
struct go_on : tact::message {};  // to the flooder itself: send the next burst
struct flood_msg : tact::message {};
struct tick_msg : tact::message {};  // to the pinger, every interval: time for a ping
struct ping_msg : tact::message {
  std::uint64_t seq = 0;
  clock_type::time_point sent{};
  pinger_actor* reply_to = nullptr;
};
struct pong_msg : tact::message {
  std::uint64_t seq = 0;
  clock_type::time_point sent{};
};

// Counts the flood, and says when it has counted all of it.
class sink_actor final : public tact::actor {
 public:
  explicit sink_actor(std::uint64_t expected) : expected_{expected} {}

  std::uint64_t count() const noexcept { return count_; }
  // Safe from any thread: once true, counted_at() is the time of the last count.
  bool counted_all() const noexcept { return counted_all_.load(std::memory_order_acquire); }
  clock_type::time_point counted_at() const noexcept { return counted_at_; }

  tact::allocation receive(flood_msg&) {
    if (++count_ == expected_) {
      counted_at_ = clock_type::now();
      counted_all_.store(true, std::memory_order_release);
    }
    return Nodelete;
  }

 private:
  const std::uint64_t expected_;
  std::uint64_t count_ = 0;
  clock_type::time_point counted_at_{};
  std::atomic<bool> counted_all_{false};
};

class flooder_actor final : public tact::actor {
 public:
  flooder_actor(sink_actor& sink, const suite::latency::parameters& p)
      : sink_{sink}, left_{p.messages}, burst_{p.burst} {
    go_on_.allow_unsent();  // a flood of one burst never needs it
  }

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(start_msg&) { return send_burst(); }
  tact::allocation receive(go_on&) { return send_burst(); }

 private:
  tact::allocation send_burst() {
    ++received_;
    const std::uint64_t n = std::min(burst_, left_);
    for (std::uint64_t i = 0; i < n; ++i) sink_ | flood_;
    left_ -= n;
    if (left_ > 0) *this | go_on_;
    return Nodelete;
  }

  sink_actor& sink_;
  std::uint64_t left_;
  const std::uint64_t burst_;
  std::uint64_t received_ = 0;
  flood_msg flood_;
  go_on go_on_;
};

class ponger_actor final : public tact::actor {
 public:
  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(ping_msg& m);

 private:
  std::uint64_t received_ = 0;
  pong_msg pong_;
};

// Pings the ponger, one ping at a time, and records the reply times. Says
// it is done, to main, once the sink has counted the flood and min_pings
// replies are in.
class pinger_actor final : public tact::actor {
 public:
  pinger_actor(ponger_actor& ponger, const sink_actor& sink, const suite::latency::parameters& p)
      : ponger_{ponger}, sink_{sink}, interval_{p.interval}, min_pings_{p.min_pings} {
    ping_.reply_to = this;
  }

  // Main's wait; once it returns, the rest may be read.
  void wait_done() const noexcept { done_.wait(false, std::memory_order_acquire); }
  std::uint64_t pings() const noexcept { return ping_.seq; }
  std::uint64_t replies() const noexcept { return replies_; }
  // Replies whose ping was not the one last sent: a lost or repeated reply.
  std::uint64_t out_of_turn() const noexcept { return out_of_turn_; }
  std::uint64_t ticks() const noexcept { return ticks_; }
  const std::vector<double>& reply_us() const noexcept { return reply_us_; }

  tact::allocation receive(start_msg&) {
    if (interval_.count() > 0) clock_ = tact::send_every(interval_, *this, tick_);
    send_ping();
    return Nodelete;
  }

  tact::allocation receive(tick_msg&) {
    ++ticks_;
    if (replies_ < ping_.seq)
      due_ = true;  // the last reply is late: the next ping goes as soon as it is in
    else
      send_ping();
    return Nodelete;
  }

  tact::allocation receive(pong_msg& m) {
    const auto now = clock_type::now();
    if (m.seq != replies_ + 1) ++out_of_turn_;
    ++replies_;
    reply_us_.push_back(std::chrono::duration<double, std::micro>(now - m.sent).count());
    if (sink_.counted_all() && replies_ >= min_pings_) {
      clock_.cancel();  // no tick is received after this
      done_.store(true, std::memory_order_release);
      done_.notify_all();
    } else if (due_ || interval_.count() == 0) {
      send_ping();
    }
    return Nodelete;
  }

 private:
  void send_ping() {
    due_ = false;
    ++ping_.seq;
    ping_.sent = clock_type::now();
    ponger_ | ping_;
  }

  ponger_actor& ponger_;
  const sink_actor& sink_;
  const std::chrono::microseconds interval_;
  const std::uint64_t min_pings_;
  tact::timer clock_;
  bool due_ = false;
  std::uint64_t replies_ = 0;
  std::uint64_t out_of_turn_ = 0;
  std::uint64_t ticks_ = 0;
  std::vector<double> reply_us_;
  std::atomic<bool> done_{false};
  tick_msg tick_;
  ping_msg ping_;
};

tact::allocation ponger_actor::receive(ping_msg& m) {
  ++received_;
  pong_.seq = m.seq;
  pong_.sent = m.sent;
  *m.reply_to | pong_;
  return Nodelete;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::latency::parameters p = suite::latency::read(o);
  const bool same_queue = o.param("same_queue", 0, 0) != 0;
  tact::system_config config{.workers = o.threads()};
  if (const auto budget = o.param("gulp_budget_us", -1, -1); budget >= 0)
    config.gulp_budget = std::chrono::microseconds{budget};
  if (const auto queues = o.param("queues", 0, 0); queues > 0)
    config.queues = static_cast<std::uint32_t>(queues);

  tact::actor_system system{config};
  double secs = 0;
  std::uint64_t counted = 0, flooder_received = 0, ponger_received = 0, replies = 0;
  std::uint64_t pings = 0, out_of_turn = 0, ticks = 0, processed = 0;
  std::vector<double> reply_us;
  bool placed = true;
  {
    const std::uint32_t last = system.workers() - 1;
    auto& sink = system.spawn_at<sink_actor>(tact::on_worker(0), p.messages);
    auto& ponger = system.spawn_at<ponger_actor>(
        same_queue ? tact::next_to(sink) : tact::on_worker(0));
    auto& flooder = system.spawn_at<flooder_actor>(tact::on_worker(last), sink, p);
    auto& pinger = system.spawn_at<pinger_actor>(tact::on_worker(last), ponger, sink, p);
    const tact::location at_sink = tact::where(sink), at_ponger = tact::where(ponger);
    placed = at_ponger.worker == at_sink.worker &&
             (same_queue || system.queues() == 1) == (at_ponger.queue == at_sink.queue);

    start_msg start, start_pinging;
    const auto started = clock_type::now();
    flooder | start;
    pinger | start_pinging;
    pinger.wait_done();
    secs = std::chrono::duration<double>(sink.counted_at() - started).count();
    system.await_quiescence();

    counted = sink.count();
    flooder_received = flooder.received();
    ponger_received = ponger.received();
    pings = pinger.pings();
    replies = pinger.replies();
    out_of_turn = pinger.out_of_turn();
    ticks = pinger.ticks();
    reply_us = pinger.reply_us();
    processed = system.stats().total.messages_processed;
    flooder | tact::delete_msg;
    sink | tact::delete_msg;
    ponger | tact::delete_msg;
    pinger | tact::delete_msg;
    system.await_quiescence();
  }
  system.stop();

  suite::check(placed, "the ponger did not start where it was placed");
  suite::check(counted == p.messages, "the sink counted " + std::to_string(counted) + " of " +
                                          std::to_string(p.messages) + " flood messages");
  suite::check(flooder_received == suite::latency::bursts(p),
               "the flooder ran " + std::to_string(flooder_received) + " bursts, expected " +
                   std::to_string(suite::latency::bursts(p)));
  suite::check(ponger_received == pings && replies == pings && out_of_turn == 0,
               std::to_string(pings) + " pings: the ponger got " + std::to_string(ponger_received) +
                   ", " + std::to_string(replies) + " replies came back, " +
                   std::to_string(out_of_turn) + " of them out of turn");
  const std::uint64_t expected = suite::latency::messages(p, pings) + 1 + ticks;
  suite::check(processed == expected, "the system delivered " + std::to_string(processed) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "latency", "tact", secs, p.messages, suite::latency_fields(reply_us));
}
