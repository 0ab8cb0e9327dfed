#pragma once

// The mail the Relacy models post through the engine's work queues, and
// the checks on its delivery.
//
// A letter's body is written by its sender before the post, and an actor's
// state is written by every delivery to it; both are rl::vars, so Relacy
// reports a data race unless the engine orders each delivery after the
// post (the queue's lock) and after the previous delivery to the same
// actor, wherever that ran (being_processed). The envelope's words and the
// copy queue's array are plain memory, which Relacy does not track: the
// body stands for them.

#include <tact/detail/atomic.hpp>

#include <array>

#include "mailbox/work_queue.hpp"

namespace tact::model {

using detail::copy_queue;
using detail::envelope;
using detail::work_queue;

struct letter {
  int from = 0;   // its sender
  int seq = 0;    // its place in its sender's order
  int actor = 0;  // the actor it is for
  rl::var<int> body;
};

// Actors, and the checks: every letter is delivered once, each sender's in
// the order sent. Senders, Actors: how many.
template <int Senders, int Actors>
class post_office {
 public:
  // In the test suite's before().
  void open() {
    for (rl::var<int>& s : state_) s($) = 0;
  }

  // Makes the delivery of chain[i] post chain[i + 1] to `q`, before it
  // writes its actor's state: the mail of a behaviour that sends on
  // through its own queue.
  void chain(work_queue& q, letter* chain, int length) {
    chain_queue_ = &q;
    chain_ = chain;
    chain_length_ = length;
  }

  // The sender's side: writes the body, posts; returns whom to wake.
  work_queue::sleepers post(work_queue& q, letter& l) {
    l.body($) = body_of(l);
    return q.post(envelope{this, &l, &deliver});
  }

  // A claim of q with `l` (work_queue::claim, see runner::post_claimed):
  // true if it took the queue, whose batch is then the caller's.
  bool claim(work_queue& q, letter& l, bool asleep_only) {
    l.body($) = body_of(l);
    return q.claim(envelope{this, &l, &deliver}, asleep_only);
  }
  // A later letter of the claimer's joining the batch it claimed.
  void join(work_queue& q, letter& l) {
    join(q.batch(), l);
  }
  // The same into any batch: a send merged into the batch in hand (see
  // runner::merge).
  void join(copy_queue& batch, letter& l) {
    l.body($) = body_of(l);
    batch.push(envelope{this, &l, &deliver});
  }

  // Runs a gulped batch as worker::process does, then lets the queue go.
  void process(work_queue& q) {
    run(q, q.batch());
    q.finish();
  }

  // Runs at most `most` letters of a gulped batch, as a runner with a
  // gulp budget does, and leaves the rest for the queue's next gulp.
  void process_at_most(work_queue& q, int most) {
    copy_queue& batch = q.batch();
    for (const work_queue* other : draining_) RL_ASSERT(other != &q);
    for (int ran = 0; ran < most && !batch.empty(); ++ran) {
      const envelope e = batch.pop();
      e.run(e.target, e.message);
    }
    if (batch.empty())
      q.finish();
    else
      (void)q.pause();
  }

  // Gulps and processes q once, if it has mail nobody processes; with
  // `most`, at most that many letters of the batch.
  bool sweep(work_queue& q, int most = 0) {
    if (q.gulp() != work_queue::gulp_result::taken) return false;
    if (most > 0)
      process_at_most(q, most);
    else
      process(q);
    return true;
  }
  // Sweeps q until it is empty: what a suite's after() does, so that every
  // letter can be checked as delivered.
  void drain(work_queue& q) {
    while (sweep(q)) {
    }
  }

  // Runs `batch`, taken from q, checking that nobody else runs one of q's
  // meanwhile. `interleave`: a scheduling point after each delivery, so
  // that posts can land while the batch is being drained.
  void run(const work_queue& q, copy_queue& batch, bool interleave = false) {
    for (const work_queue* other : draining_) RL_ASSERT(other != &q);
    draining_[draining_count_++] = &q;
    while (!batch.empty()) {
      const envelope e = batch.pop();
      e.run(e.target, e.message);
      if (interleave) rl::ctx().sched();
    }
    for (const work_queue*& other : draining_)
      if (other == &q) other = draining_[--draining_count_];
    draining_[draining_count_] = nullptr;
  }

  int delivered() const noexcept { return delivered_; }

  // In after(): every letter was delivered, `sent[i]` from sender i.
  void check(const std::array<int, Senders>& sent) const {
    int total = 0;
    for (int i = 0; i < Senders; ++i) {
      RL_ASSERT(next_[i] == sent[i]);
      total += sent[i];
    }
    RL_ASSERT(delivered_ == total);
  }
  // The same, `each` from every sender.
  void check(int each) const {
    std::array<int, Senders> sent;
    sent.fill(each);
    check(sent);
  }

 private:
  static int body_of(const letter& l) noexcept { return 100 * l.from + l.seq + 1; }

  static void deliver(void* target, void* message) noexcept {
    auto& self = *static_cast<post_office*>(target);
    letter& l = *static_cast<letter*>(message);
    RL_ASSERT(l.body($) == body_of(l));
    RL_ASSERT(l.seq == self.next_[l.from]);  // in order, and once
    ++self.next_[l.from];
    ++self.delivered_;
    if (self.chain_ != nullptr && &l >= self.chain_ && &l + 1 < self.chain_ + self.chain_length_)
      self.post(*self.chain_queue_, *(&l + 1));
    self.state_[l.actor]($) = self.state_[l.actor]($) + 1;
  }

  rl::var<int> state_[Actors];
  int next_[Senders] = {};
  int delivered_ = 0;
  const work_queue* draining_[4] = {};  // queues whose batch is being run
  int draining_count_ = 0;
  work_queue* chain_queue_ = nullptr;
  letter* chain_ = nullptr;
  int chain_length_ = 0;
};

}  // namespace tact::model
