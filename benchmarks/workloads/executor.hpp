#pragma once

// The executor workload (Cforall thesis, "Executor"): groups of actors that, round
// after round, each send one message to every other member of their group
// and wait for one from each. Nothing is computed per message, so the
// executor's send and dispatch paths are the whole cost. The balance
// workloads (balance.hpp) reuse the same groups, placed on chosen workers.
//
//   tact::actor_system system{{.workers = 2}};
//   const tact::bench::executor_result r = tact::bench::run_executor(system, {});
//
// Header-only so that any benchmark driver (Google Benchmark here, a suite
// runner later) can include it.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>

namespace tact::bench {

// The thesis runs 40,000 actors in groups of 100 for 400 rounds (1.58
// billion messages). The defaults keep its group size and shrink the rest to
// 24.75 million messages, about half a second at one or two workers on two
// cores without stealing.
struct executor_params {
  std::uint32_t actors = 2'000;  // a multiple of `group`
  std::uint32_t group = 100;     // at least 2
  std::uint32_t rounds = 125;    // at least 1
  // Steps of a dummy computation per message received (none in the
  // thesis); one step is a few nanoseconds. With work, messages are worth
  // moving to another core, and stealing can show what it gains.
  std::uint32_t work = 0;
};

struct executor_result {
  // Round messages received, over all actors: actors * (group - 1) * rounds.
  std::uint64_t messages = 0;
  // Every delivery the system made during the run (round messages plus one
  // start message per actor), from its statistics.
  std::uint64_t deliveries = 0;
};

// Throws std::runtime_error saying what went wrong: every workload checks
// its own result and calls this when it is wrong.
[[noreturn]] inline void fail(const std::string& what) {
  throw std::runtime_error{"tact benchmark result is wrong: " + what};
}

// Messages delivered by `system` so far. Exact while it is quiescent.
inline std::uint64_t deliveries_so_far(const actor_system& system) {
  return system.stats().total.messages_processed;
}

// ---- the actors ----

// Starts a member's first round. Sent once to every member by the thread
// running the workload.
struct round_start : message {};

// The message of one round. Every member sends the same two preallocated
// ticks (read only, so one object may be in flight to many receivers at
// once), so a round allocates nothing. Two, because a member may receive
// ticks of the next round before its current round is complete (a peer that
// has all its messages moves on) but never of the round after that (a peer
// cannot finish round r + 1 without our own tick of round r + 1): the
// parity of the round tells them apart.
struct round_tick : message {
  explicit round_tick(std::uint32_t round_parity) noexcept : parity{round_parity} {}
  std::uint32_t parity;
};

// The messages one run shares: they must outlive every member's last
// delivery. The odd tick exists only if a second round does (with checks
// on, a message destroyed unsent is reported).
struct round_messages {
  explicit round_messages(std::uint32_t rounds) {
    if (rounds > 1) odd.emplace(1);
  }

  round_tick& tick(std::uint32_t round) noexcept { return round % 2 == 0 ? even : *odd; }

  round_start start;
  round_tick even{0};
  std::optional<round_tick> odd;
};

// One actor of a group. Owned by the workload (not spawned): it returns
// Finished after its last round, and the workload reads its counters and
// destroys it once the system is quiescent.
class round_member final : public actor {
 public:
  round_member(actor_system& system, round_messages& messages, std::uint32_t rounds,
               std::uint32_t work)
      : actor{system}, messages_{messages}, rounds_{rounds}, work_{work} {}

  // The group, this member included. Only before the start message is sent;
  // the span must outlive the run.
  void join(std::span<round_member* const> group) noexcept { group_ = group; }

  // Ticks received, and rounds completed. Read once the system is quiescent.
  std::uint64_t received() const noexcept { return received_; }
  std::uint32_t rounds_done() const noexcept { return round_; }

  allocation receive(round_start&) {
    started_ = true;
    send_round();
    return advance();
  }

  // Ticks of round 0 can arrive before our start message (peers started
  // first): they are counted, and the round completes once we have started.
  allocation receive(round_tick& tick) {
    ++received_;
    compute();
    ++pending_[tick.parity];
    return started_ ? advance() : Nodelete;
  }

 private:
  // The message's work: a dependent chain the compiler cannot drop.
  void compute() noexcept {
    for (std::uint32_t i = 0; i < work_; ++i) checksum_ = checksum_ * 6364136223846793005ull + i;
  }

  void send_round() {
    round_tick& tick = messages_.tick(round_);
    for (round_member* peer : group_)
      if (peer != this) *peer | tick;
  }

  // Completes every round whose ticks are all in: the next round's ticks may
  // all have arrived while this one was still open.
  allocation advance() {
    const std::uint64_t peers = group_.size() - 1;
    while (pending_[round_ % 2] == peers) {
      pending_[round_ % 2] = 0;
      if (++round_ == rounds_) return Finished;
      send_round();
    }
    return Nodelete;
  }

  round_messages& messages_;
  std::span<round_member* const> group_;
  const std::uint32_t rounds_;
  const std::uint32_t work_;
  std::uint64_t checksum_ = 0;
  std::uint32_t round_ = 0;
  std::uint64_t pending_[2] = {0, 0};  // ticks received for this round and the next, by parity
  std::uint64_t received_ = 0;
  bool started_ = false;
};

// The members of one run, created one at a time so that a caller can place
// them (see balance.hpp), then grouped in creation order, started, and
// checked. Not copyable or movable: the members refer to its messages.
class round_groups {
 public:
  // Throws std::invalid_argument for parameters that cannot form groups.
  explicit round_groups(const executor_params& params)
      : params_{validated(params)}, messages_{params.rounds} {
    members_.reserve(params.actors);
    handles_.reserve(params.actors);
  }
  round_groups(const round_groups&) = delete;
  round_groups& operator=(const round_groups&) = delete;

  bool complete() const noexcept { return members_.size() == params_.actors; }

  // Round messages a complete run receives.
  std::uint64_t expected_messages() const noexcept {
    return std::uint64_t{params_.actors} * (params_.group - 1) * params_.rounds;
  }

  // Creates the next member on `system` (from the calling thread, so it
  // takes the next queue of the round robin). Precondition: !complete().
  round_member& add(actor_system& system) {
    round_member& m =
        *members_.emplace_back(
            std::make_unique<round_member>(system, messages_, params_.rounds, params_.work));
    handles_.push_back(&m);
    return m;
  }

  // Groups consecutive members and sends each its start message.
  // Precondition: complete(), and start() not called yet.
  void start() {
    const std::span<round_member* const> all{handles_};
    for (std::size_t i = 0; i < all.size(); ++i)
      all[i]->join(all.subspan(i / params_.group * params_.group, params_.group));
    for (round_member* m : handles_) *m | messages_.start;
  }

  // Instead of start(): finishes every member without running it, so that
  // the system can stop after a run abandoned before it began. (With checks
  // on, the run's messages are then reported as destroyed unsent.)
  void abandon() {
    for (round_member* m : handles_) *m | finished_msg;
  }

  // Once the system is quiescent after start(): checks that every member ran
  // every round and received every tick; returns the ticks received.
  std::uint64_t check() const {
    const std::uint64_t per_member = std::uint64_t{params_.group - 1} * params_.rounds;
    std::uint64_t received = 0;
    for (const round_member* m : handles_) {
      if (!m->finished() || m->rounds_done() != params_.rounds || m->received() != per_member)
        fail("executor: an actor " + std::string{m->finished() ? "finished" : "stopped"} +
             " after " + std::to_string(m->rounds_done()) + " of " +
             std::to_string(params_.rounds) + " rounds with " + std::to_string(m->received()) +
             " of " + std::to_string(per_member) + " messages");
      received += m->received();
    }
    if (received != expected_messages())
      fail("executor: " + std::to_string(received) + " messages received, expected " +
           std::to_string(expected_messages()));
    return received;
  }

 private:
  static executor_params validated(const executor_params& params) {
    if (params.group < 2)
      throw std::invalid_argument{"executor workload: group is " + std::to_string(params.group) +
                                  "; a group needs at least 2 actors"};
    if (params.actors == 0 || params.actors % params.group != 0)
      throw std::invalid_argument{"executor workload: actors (" + std::to_string(params.actors) +
                                  ") must be a positive multiple of group (" +
                                  std::to_string(params.group) + ")"};
    if (params.rounds == 0)
      throw std::invalid_argument{"executor workload: rounds must be at least 1"};
    return params;
  }

  const executor_params params_;
  round_messages messages_;
  std::vector<std::unique_ptr<round_member>> members_;
  std::vector<round_member*> handles_;  // the same members, as groups are spans of them
};

// Runs the executor workload on `system` and checks it, throwing
// std::runtime_error if the result is wrong. From a thread that is not one
// of the system's workers; blocks until the run is over (await_quiescence),
// so nothing else may be running on `system` meanwhile. Allocates the
// actors up front; the rounds allocate nothing.
inline executor_result run_executor(actor_system& system, const executor_params& params) {
  round_groups groups{params};
  while (!groups.complete()) groups.add(system);
  const std::uint64_t before = deliveries_so_far(system);
  groups.start();
  system.await_quiescence();
  const executor_result result{.messages = groups.check(),
                               .deliveries = deliveries_so_far(system) - before};
  if (result.deliveries != result.messages + params.actors)
    fail("executor: the system counted " + std::to_string(result.deliveries) +
         " deliveries, the actors " + std::to_string(result.messages + params.actors));
  return result;
}

}  // namespace tact::bench
