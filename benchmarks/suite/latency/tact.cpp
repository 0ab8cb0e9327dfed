// latency: how long a message waits on a worker that a flood keeps busy
// (bounded delivery time, as the reactor scheduling paper defines it). Not
// a Savina workload.
//
// A flooder sends `messages` small messages to a sink that only counts
// them, in bursts: each run of its behaviour sends `burst` of them and one
// message to itself to carry on, so the flood comes as fast as the
// flooder can send and the sink's queue holds whatever the sink has not
// drained yet. Meanwhile main pings a ponger that runs on the sink's
// worker and answers at once: one ping at a time, a ping every
// `interval_us` (or at once, when the last reply took longer), each
// carrying its send time. It goes on until the sink has counted the whole
// flood and at least `min_pings` pings have been answered. In all
//   bursts (1 start + bursts − 1 to itself) + messages flood + 2 × pings.
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
// It measures the reply time of each ping (reply received − ping sent),
// reported as p50_us, p99_us and max_us, and the flood's own time:
// `seconds` runs from the start message to the sink counting the last
// flood message, ns_per_msg is over the flood messages alone.
//
// Placement. The sink and the ponger start on worker 0, each on a queue of
// its own (by default the ponger is not next to the sink: on the sink's
// queue a ping would wait behind the backlog whatever the scheduler does,
// and this workload is about whether a worker gives another queue a turn);
// the flooder starts on the last worker. With one worker the system has one
// queue (the default configuration), so the three share it. Stealing may
// still move queues between workers once the run is under way.
//
// The replies go to an actor bound to a tact::sponsor that main runs
// itself: main sleeps until a reply arrives and runs nothing of the pool.
// An ask from main would lend main to the pool as a guest worker while it
// waits, and it would run the flood, or the ponger, itself. Every message
// is one object sent again and again: the flood message (tact never copies
// a message, so one object may be queued any number of times), and the
// ping and its reply, each of which is answered before it is sent again.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

class pinger;

struct start_msg : tact::message {};
struct go_on : tact::message {};  // to the flooder itself: send the next burst
struct flood_msg : tact::message {};
struct ping_msg : tact::message {
  std::uint64_t seq = 0;
  clock_type::time_point sent{};
  pinger* reply_to = nullptr;
  std::atomic<std::uint32_t>* bell = nullptr;  // rung once the reply is sent
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

// Bound to main's sponsor: receives the replies on main's thread and
// records their times.
class pinger final : public tact::actor {
 public:
  std::uint64_t replies() const noexcept { return replies_; }
  // Replies whose ping was not the one last sent: a lost or repeated reply.
  std::uint64_t out_of_turn() const noexcept { return out_of_turn_; }
  const std::vector<double>& reply_us() const noexcept { return reply_us_; }

  tact::allocation receive(pong_msg& m) {
    const auto now = clock_type::now();
    if (m.seq != replies_ + 1) ++out_of_turn_;
    ++replies_;
    reply_us_.push_back(std::chrono::duration<double, std::micro>(now - m.sent).count());
    return Nodelete;
  }

 private:
  std::uint64_t replies_ = 0;
  std::uint64_t out_of_turn_ = 0;
  std::vector<double> reply_us_;
};

class ponger_actor final : public tact::actor {
 public:
  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(ping_msg& m) {
    ++received_;
    pong_.seq = m.seq;
    pong_.sent = m.sent;
    *m.reply_to | pong_;
    m.bell->fetch_add(1, std::memory_order_release);
    m.bell->notify_one();
    return Nodelete;
  }

 private:
  std::uint64_t received_ = 0;
  pong_msg pong_;
};

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
  std::uint64_t pings = 0;
  std::uint64_t counted = 0, flooder_received = 0, ponger_received = 0, replies = 0;
  std::uint64_t out_of_turn = 0, processed = 0;
  std::vector<double> reply_us;
  bool placed = true;
  {
    // Rung by the ponger once it has sent a reply; main sleeps on it. The
    // sponsor has no `wake`: one would promise a run of the sponsor after
    // every notification, and main stops running it after the last reply,
    // which a notification still in flight would then wait for (the
    // system is not quiescent until a woken sponsor has run).
    std::atomic<std::uint32_t> bell{0};
    tact::sponsor here{system};
    auto& answers = here.spawn<pinger>();
    auto& sink = system.spawn_at<sink_actor>(tact::on_worker(0), p.messages);
    auto& ponger = system.spawn_at<ponger_actor>(
        same_queue ? tact::next_to(sink) : tact::on_worker(0));
    auto& flooder = system.spawn_at<flooder_actor>(tact::on_worker(system.workers() - 1), sink, p);
    const tact::location at_sink = tact::where(sink), at_ponger = tact::where(ponger);
    placed = at_ponger.worker == at_sink.worker &&
             (same_queue || system.queues() == 1) == (at_ponger.queue == at_sink.queue);

    start_msg start;
    ping_msg ping;
    ping.reply_to = &answers;
    ping.bell = &bell;
    const auto started = clock_type::now();
    flooder | start;
    auto next = started;
    while (!sink.counted_all() || pings < p.min_pings) {
      std::this_thread::sleep_until(next);
      ping.seq = ++pings;
      ping.sent = clock_type::now();
      next = ping.sent + p.interval;
      ponger | ping;
      // Runs the pinger's mail until the reply is in, sleeping while there
      // is none (a reply that comes after `seen` was read changes the bell).
      while (answers.replies() < pings) {
        const std::uint32_t seen = bell.load(std::memory_order_acquire);
        if (here.run_pending() == 0) bell.wait(seen, std::memory_order_acquire);
      }
    }
    secs = std::chrono::duration<double>(sink.counted_at() - started).count();
    system.await_quiescence();

    counted = sink.count();
    flooder_received = flooder.received();
    ponger_received = ponger.received();
    replies = answers.replies();
    out_of_turn = answers.out_of_turn();
    reply_us = answers.reply_us();
    processed = system.stats().total.messages_processed;
    flooder | tact::delete_msg;
    sink | tact::delete_msg;
    ponger | tact::delete_msg;
    answers | tact::delete_msg;
    here.run_pending();
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
  const std::uint64_t expected = suite::latency::messages(p, pings);
  suite::check(processed == expected, "the system delivered " + std::to_string(processed) +
                                          " messages, expected " + std::to_string(expected));
  suite::report(o, "latency", "tact", secs, p.messages, suite::latency_fields(reply_us));
}
