#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace tact::detail {

// How many pool workers should run, decided from the work the executor
// does (the messages it runs and the messages it sends; see
// executor::adapt_when_due): all of them while the work gains from a
// second core, fewer while it is message-bound and the cores only pass its
// messages (and the actors' state) back and forth. Message-bound work can
// run several times faster on one core than spread over two (each send to
// a queue of the other worker moves the queue's lines between caches; see
// docs/performance.md), and no placement rule can tell in advance which
// work is which; so the governor measures, by hill climbing.
//
// Time is cut into epochs; at each epoch's end decide() gets the messages
// counted in it and how long it lasted. Work below `least_messages` per
// epoch's length is not message-bound (long behaviours, or little work):
// while it lasts every worker runs, at once, and no other count is tried.
// Above it, the governor holds its count for a while, then tries the
// neighbouring count (one fewer, else one more; for more than two workers
// the direction alternates after each failed try): `pairs` pairs of arms,
// one at the new count and one at the old, alternating, so that a rate
// that drifts over the try (the work's phases, other processes) weighs on
// both sides alike. An arm is `arm_epochs` epochs (up to
// `lone_arm_epochs` at one worker, see not_yet_alone()), of which only
// the last counts: the first runs what the other count left behind (a
// flood's backlog, sent at one count and run at the next, would otherwise
// credit whichever count followed it) and moves the work's lines between
// the caches. It keeps the new count if its counted epochs' rate beat the
// old's by `gain_fewer` (`gain_fewer_steady` where both counts ran
// `steady_messages` per epoch or more), or by `gain_more`, else goes
// back. Tries end early where the answer is plain: a first pair whose
// rates differ `decisive_gain` times decides at once, and a first epoch
// at the new count whose rate is `glaring_gain` times the last epoch's
// at the old, or a `glaring_gain`th of it. A try of more workers also
// fails after a first pair in which more trail fewer by `trailing_gain`,
// and at a first epoch that runs a `decisive_gain`th of the rate before
// it or less (see trailing() and first_epoch()). Each failed try doubles
// the hold, up to `hold_longest` epochs, so a steady workload pays for a
// try (one epoch at the worse count where the counts are glaringly
// apart, or more workers decisively worse; one arm where they are
// decisively apart, or more workers trail; `pairs` arms where the counts
// are close) about once per `hold_longest` epochs; a kept try starts
// again from `hold_first`. The second message-bound epoch in a row, at
// the start or after a drop below the message-bound rate, starts a try:
// a program that runs several times faster on fewer workers would
// otherwise spend its first epochs, often a large part of a short run,
// at the slow count. Not the first: that one
// began before the work did (the program's start-up, the phase before),
// and its rate is no measure to weigh a try's first epoch against.
//
// What one worker cannot tell from a rate: whether the work has anything
// to share. A chain (a token passed round a ring, a ping-pong, an actor
// creating the next) has one message to run at a time, and a second
// worker can only pass it back and forth; on a machine where a message
// crosses cores in the time it takes to run a few dozen, its rate at two
// workers is within a tenth of its rate at one (thread_ring: 280,000 to
// 300,000 messages an epoch at either count), too close for a try of one
// worker to be kept, and the count stayed at two, where the idle worker's
// wakes and parks cost 9%. So decide() is told, for an epoch that one
// worker ran alone, whether it ever found two messages waiting
// (executor::note_waiting): steady work that never does stays on one
// worker without trying more, and a try of one worker where it never did
// is kept unless its rate fell by more than `alone_loss`. Only for a
// steady stream (`steady_messages` an epoch or more): the worker looks
// between messages, a few times an epoch, and a fork of two long
// messages shows one waiting while the other runs, as a chain does; at
// a hundred nanoseconds a message or less, what a fork shares is not
// worth a crossing between cores anyway.
//
// Only the thread that holds the executor's adaptation turn calls it (see
// executor::adapt_when_due): plain members.
class governor {
 public:
  // Short: a program whose work runs twice as fast on fewer workers
  // loses half of every epoch it waits at the wrong count, and a try that
  // fails costs two epochs and doubles the next wait.
  static constexpr std::uint32_t hold_first = 4;
  static constexpr std::uint32_t hold_longest = 512;
  // The message-bound epochs before the first try (see above).
  static constexpr std::uint32_t first_wait = 2;
  static constexpr std::uint32_t pairs = 2;
  static constexpr std::uint32_t arm_epochs = 2;
  // An arm at one worker may be this long (see not_yet_alone()).
  static constexpr std::uint32_t lone_arm_epochs = arm_epochs + 2;
  // The rate a try must beat, over the old count's: by much to run on
  // fewer workers, by little to run on more. A wrong try kept costs the
  // work its parallelism in the first case (several times slower, for work
  // that shares out), and at worst what the old count cost in the other.
  static constexpr double gain_fewer = 1.25;
  static constexpr double gain_more = 1.05;
  // Fewer workers need less where the work is a steady stream of
  // messages at both counts (see fewer_gain()).
  static constexpr double gain_fewer_steady = 1.10;
  static constexpr std::uint64_t steady_messages = 10'000;
  // A first pair of arms this far apart decides the try (see decisive()),
  // and so does the first epoch of a try of more workers this far below
  // the epoch before the try (see first_epoch()).
  static constexpr double decisive_gain = 1.5;
  // A first pair in which more workers trail fewer by this much ends a
  // try of more (see trailing()).
  static constexpr double trailing_gain = 1.15;
  // A try's first epoch this far from the epoch before the try decides it
  // (see first_epoch()).
  static constexpr double glaring_gain = 3.0;
  // Work is message-bound at this many messages per epoch's length, or more.
  static constexpr std::uint64_t least_messages = 32;
  // A try of one worker for work with nothing to share is kept unless its
  // rate is below the old count's by more than this (see above).
  static constexpr double alone_loss = 0.95;

  // What an epoch showed of the work's parallelism (see above).
  enum class sharing : std::uint8_t {
    unknown,  // no worker ran alone in it, or none looked
    pending,  // one was left alone, but ran no turn alone yet (its mark)
    none,     // a worker ran alone, and never found two messages waiting
    some,     // one did find two or more
  };

  // `epoch`: the length the caller means its epochs to have.
  governor(std::uint32_t workers, std::chrono::nanoseconds epoch) noexcept
      : workers_{workers}, epoch_{epoch}, active_{workers} {}

  std::uint32_t active() const noexcept { return active_; }

  // The count of workers to run from now on, after an epoch that counted
  // `messages` in `elapsed` and showed `shared` of its parallelism.
  std::uint32_t decide(std::uint64_t messages, std::chrono::nanoseconds elapsed,
                       sharing shared = sharing::unknown) noexcept {
    if (workers_ == 1) return 1;
    const tally before = last_;
    last_ = {messages, elapsed};
    // The epoch ran at active_, the count decided after the one before.
    const bool alone = active_ == 1 && shared == sharing::none && steady(last_);
    if (!trying_) {
      if (!message_bound(messages, elapsed)) {
        active_ = workers_;
        hold_ = hold_first;
        wait_ = first_wait;
      } else if (alone) {
        // Nothing to share: no try of more.
      } else if (--wait_ == 0) {
        from_ = active_;
        to_ = neighbour();
        trying_ = true;
        arms_ = in_arm_ = 0;
        arm_before_ = last_;
        at_from_ = at_to_ = {};
        lone_at_to_ = shared_at_to_ = false;
        active_ = to_;
      }
      return active_;
    }
    if (active_ == to_ && to_ == 1) {
      lone_at_to_ = lone_at_to_ || alone;
      shared_at_to_ = shared_at_to_ || shared == sharing::some;
    }
    if (arms_ == 0 && in_arm_ == 0) {
      if (const verdict v = first_epoch(before, last_, to_ > from_); v != verdict::open)
        return end_try(v == verdict::keep);
    }
    // Arms alternate, to_ first; each counts its last epoch only.
    if (++in_arm_ >= arm_epochs && !not_yet_alone(shared)) {
      tally& arm = arms_ % 2 == 0 ? at_to_ : at_from_;
      arm.messages += messages;
      arm.time += elapsed;
      ++arms_;
      in_arm_ = 0;
      arm_before_ = last_;
    }
    const bool decided = arms_ == 2 && in_arm_ == 0 && (decisive() || trailing());
    if (arms_ < 2 * pairs && !decided) {
      active_ = arms_ % 2 == 0 ? to_ : from_;
      return active_;
    }
    return end_try(at_to_.rate() > at_from_.rate() * (to_ < from_ ? fewer_gain() : gain_more));
  }

 private:
  struct tally {
    std::uint64_t messages = 0;
    std::chrono::nanoseconds time{};
    double rate() const noexcept {
      return time.count() > 0 ? static_cast<double>(messages) / static_cast<double>(time.count())
                              : 0.0;
    }
  };

  // After the first pair of arms: one count's rate is `decisive_gain`
  // times the other's, which no drift over the rest of the try could undo. The
  // try ends there, and a workload whose counts differ much pays one arm
  // at the worse count per try (big's counted epochs at one worker run
  // 1.6 to 1.7 times as many messages as at two).
  bool decisive() const noexcept {
    const double to = at_to_.rate();
    const double from = at_from_.rate();
    return to >= from * decisive_gain || from >= to * decisive_gain;
  }

  // After the first pair of arms of a try of more workers: more trail
  // fewer by trailing_gain. To be kept they would need the second pair to
  // make that up and gain gain_more on top; drift over the try weighs on
  // both counts alike, and what is left of it between two pairs is a few
  // percent. The try ends there, and more workers that are plainly worse
  // cost one arm, not `pairs` (latency's flood at two workers, 20% behind
  // one). Not a try of fewer: the counted epoch at one worker may still
  // run ordinary batches, not turns alone (see not_yet_alone(): the
  // worker's mark, or its wake-up, can outlast the arm's extension on a
  // busy machine), and a flood's receiver may be catching up; failed
  // there, sequential work waits out a hold at two workers (latency,
  // traced once with this rule for both directions: its first try of one
  // failed after the first pair, 192,000 messages at one, in a longer
  // epoch, against 174,000 at two, and the run spent 46 of 103 epochs at
  // two, against 14 of 91 where the try went on).
  bool trailing() const noexcept {
    return to_ > from_ && at_to_.rate() * trailing_gain < at_from_.rate();
  }

  // The first epoch of a try against the last one before it: a count
  // whose rate is glaring_gain times the other's, a gap that drift between
  // two adjacent epochs does not explain, decides the try. A backlog that
  // the old count left can inflate the first epoch (why an arm's first
  // epoch does not count), but the large ones build where a flooder's
  // receiver cannot run, at fewer workers, and are run by a try of more
  // (counting: 3.6 times the epoch before, at two workers after one); a
  // wrong keep of more workers costs at worst what the old count did.
  //
  // For the same reason a try of more workers fails where its first
  // epoch ran a decisive_gain-th of the rate before it or less: whatever
  // a backlog adds only raises that epoch, so a loss despite it is the
  // count's (big: 0.54 of the rate before, at two workers after one),
  // and the try costs that epoch instead of an arm. Not a try of fewer:
  // its first epoch may miss a flood's runs, whose sends the old count
  // counted (counting_bounded: 0.5 of the rate before at one worker after
  // two, then 1.45 times it in the arm's second epoch).
  enum class verdict : std::uint8_t { open, keep, fail };
  static verdict first_epoch(const tally& before, const tally& first, bool more) noexcept {
    const double was = before.rate();
    const double is = first.rate();
    if (was <= 0.0) return verdict::open;
    if (is >= was * glaring_gain) return verdict::keep;
    if (is * (more ? decisive_gain : glaring_gain) <= was) return verdict::fail;
    return verdict::open;
  }

  std::uint32_t end_try(bool keep) noexcept {
    trying_ = false;
    if (keep) {
      active_ = to_;
      settle(hold_first);
    } else {
      active_ = from_;
      down_ = !down_;
      settle(std::min(2 * hold_, hold_longest));
    }
    return active_;
  }

  // The gain a try of fewer workers must show. A conversation or a flood
  // runs tens of thousands of messages or more in every epoch, at a rate
  // that holds from one epoch to the next within several percent, so a
  // gain of 10% is there to see (a flood between two actors runs 10% to
  // 25% faster on one worker than with each on its own core). Work that
  // runs fewer is mostly other work (computations sending their results
  // in bursts, a few hundred to a few thousand an epoch: nqueens), whose
  // rate from one epoch to the next is noise at that scale; at 10% a try
  // of one worker was kept on that noise, and the work lost its
  // parallelism.
  //
  // Where the try's epochs at one worker had nothing to share, a second
  // worker could only have passed the messages back and forth: the try is
  // kept unless it lost much (alone_loss).
  double fewer_gain() const noexcept {
    if (lone_at_to_ && !shared_at_to_) return alone_loss;
    return steady(at_to_) && steady(at_from_) ? gain_fewer_steady : gain_fewer;
  }
  bool steady(const tally& t) const noexcept {
    return at_rate(t.messages, t.time, steady_messages);
  }

  // Enough messages to weigh, and at a rate that makes their cost matter
  // beside the cost of passing them between cores. An epoch that lasted
  // longer than meant (the workers were parked, or stuck) counts by its
  // rate.
  bool message_bound(std::uint64_t messages, std::chrono::nanoseconds elapsed) const noexcept {
    return messages >= least_messages && at_rate(messages, elapsed, least_messages);
  }
  // Whether `messages` in `elapsed` is at least `per_epoch` per epoch's
  // length.
  bool at_rate(std::uint64_t messages, std::chrono::nanoseconds elapsed,
               std::uint64_t per_epoch) const noexcept {
    return static_cast<double>(messages) * static_cast<double>(epoch_.count()) >=
           static_cast<double>(per_epoch) * static_cast<double>(elapsed.count());
  }
  // Whether an arm at one worker, arm_epochs or more epochs long, should
  // go on for another epoch before it counts one. The worker runs alone
  // only once the governor has weighed a whole epoch begun after its first
  // batch since it last parked (see executor::past_mark): one that parks as
  // the count drops (the other held the work, as a token passed between
  // the two does) runs its first two or three epochs at one worker as
  // ordinary batches, slower than its turns alone, and an arm of two
  // epochs counted one of those in every try (thread_ring: 230,000 to
  // 260,000 messages in it, against 280,000 to 300,000 alone; the try was
  // never kept). So an arm at one goes on, up to lone_arm_epochs, while
  // its worker, left alone, ran no turn alone yet for its mark, and its
  // rate is close to the other count's (arm_before_, its last epoch): work
  // decisively slower on one worker (a flood that shares out) is not held
  // there longer, nor work whose worker parks (it may never get past its
  // mark).
  bool not_yet_alone(sharing shared) const noexcept {
    return active_ == 1 && shared == sharing::pending && in_arm_ < lone_arm_epochs &&
           steady(last_) && last_.rate() * decisive_gain >= arm_before_.rate();
  }
  void settle(std::uint32_t hold) noexcept {
    hold_ = hold;
    wait_ = hold;
  }
  // The count to try: one fewer or one more, as the direction says while
  // both are possible.
  std::uint32_t neighbour() const noexcept {
    if (active_ == 1) return 2;
    if (active_ == workers_) return active_ - 1;
    return down_ ? active_ - 1 : active_ + 1;
  }

  const std::uint32_t workers_;
  const std::chrono::nanoseconds epoch_;
  std::uint32_t active_;
  std::uint32_t hold_ = hold_first;
  std::uint32_t wait_ = first_wait;
  tally last_;  // the epoch just ended
  bool down_ = true;
  // A try: from_ to to_, arms_ arms done and in_arm_ epochs into the
  // next, the counted epochs of each count summed.
  bool trying_ = false;
  std::uint32_t from_ = 0;
  std::uint32_t to_ = 0;
  std::uint32_t arms_ = 0;
  std::uint32_t in_arm_ = 0;
  tally at_from_;
  tally at_to_;
  // The epoch before the arm in progress: the other count's last (the
  // last before the try, for the first arm).
  tally arm_before_;
  // Of the try's epochs at to_, when that is one worker: one had nothing
  // to share, one had some (see decide()). An epoch in which the worker
  // did not yet run alone (the other was still finishing its batch) tells
  // neither.
  bool lone_at_to_ = false;
  bool shared_at_to_ = false;
};

}  // namespace tact::detail
