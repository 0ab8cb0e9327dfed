#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include <tact/detail/behaviour_local.hpp>
#include <tact/defaults.hpp>
#include <tact/detail/envelope.hpp>

#include "executor/counters.hpp"
#include "executor/epochs.hpp"
#include "executor/outbox.hpp"
#include "executor/parker.hpp"
#include "mailbox/sleeper.hpp"
#include "mailbox/work_queue.hpp"
#include "support/assert.hpp"
#include "support/padded.hpp"

namespace tact::detail {

class executor;

// What a suspended behaviour waits for (see runner::suspend). Lives with
// the waiter.
struct wake_condition {
  enum status { waiting, soon, ready };
  // Polled on the runner's thread: ready once the behaviour may go on (its
  // event happened, or `expired`, the deadline has passed, and it gave
  // up); soon if the event is moments away (the runner must not sleep).
  // Whoever makes it ready calls wake() on the runner after making poll
  // able to see it.
  status (*poll)(wake_condition& self, bool expired) noexcept;
  std::chrono::steady_clock::time_point deadline;
};

// When a runner helping on behalf of a waiter has helped enough: once
// done(context) (its answer came) or the deadline has passed.
struct help_limit {
  bool (*done)(const void* context) noexcept;
  const void* context;
  std::chrono::steady_clock::time_point deadline;

  bool reached() const noexcept {
    return done(context) || std::chrono::steady_clock::now() >= deadline;
  }
};

// Around every run of envelopes: a behaviour that runs others on its own
// context (a sponsor run from inside it) finds its behaviour_local as it
// left it when they return (see tact/detail/behaviour_local.hpp).
class behaviour_local_kept {
 public:
  behaviour_local_kept() noexcept = default;
  ~behaviour_local_kept() { behaviour_local = saved_; }
  behaviour_local_kept(const behaviour_local_kept&) = delete;
  behaviour_local_kept& operator=(const behaviour_local_kept&) = delete;

 private:
  const std::uintptr_t saved_ = behaviour_local;
};

// The core of every thread that runs messages for an executor: it runs
// gulped batches of work queues (the Cforall thesis's "process the batch
// locally"), lets a behaviour's sends to its own queue join the batch in
// hand, and suspends behaviours that wait (an ask inside a behaviour),
// running other work meanwhile. The roles are built on it: the pool worker
// (pool_worker.hpp: sweep, steal, park), the threads lent by askers and the
// sponsors' threads (lending.hpp), and the deterministic executor's
// stepper (stepper.hpp). The fibers behind suspension are private to it
// (suspension.hpp), so this header pulls in no Boost.
//
// Every runner has an index, unique among its executor's runners: the pool
// workers' (or the stepper's) are 0 .. workers - 1, in worker order, then
// come the guests and the sponsors' runners. It names the runner as a
// participant of the epochs and keys what the actor models keep per runner.
class runner : public sleeper {
 public:
  static constexpr std::uint32_t no_queue = ~std::uint32_t{0};
  // A pool worker's hunger (pool_worker::hungry()): none, hungry, or fed
  // (a sender took the hunger and posted it a share).
  static constexpr std::uint8_t not_hungry = 0, hungry_now = 1, fed = 2;

  // A block of the ownership array's slots, [first, last): the queues a
  // pool worker owns (all of them for the stepper's runner; none for the
  // others), which it registers on when it waits.
  struct block {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
  };
  // What a fiber runs while a behaviour of this runner is suspended: the
  // role's loop, which returns once ending() (see fiber_turn()). Null for
  // a runner whose behaviours never suspend (they wait some other way).
  using fiber_loop = void (*)(runner& self);

  runner(executor& owner, std::uint32_t index, block owned, fiber_loop loop);
  ~runner();
  runner(const runner&) = delete;
  runner& operator=(const runner&) = delete;

  // ---- any thread ----

  executor& owner() const noexcept { return owner_; }
  std::uint32_t index() const noexcept { return index_; }
  block owned() const noexcept { return owned_; }
  // Makes the runner look at its queues again if it waits (see wait()).
  void wake() noexcept override;

  // ---- only on this runner's thread ----

  // The calling thread runs as this runner until leave(): this_thread_runner
  // names it. Nothing of this runner may be suspended when it leaves.
  void enter() noexcept;
  void leave() noexcept;

  // The index of the queue whose batch is being processed, or no_queue
  // between batches.
  std::uint32_t current_queue() const noexcept { return current_index_; }

  // A send to the queue whose batch this runner is processing joins that
  // batch directly, with no lock, while the per-gulp budget lasts. FIFO per
  // sender holds: every earlier send from an actor of this queue is already
  // in this batch or was processed before it (a batch with mail behind it
  // that may hold such sends has no budget: one cut short and taken up
  // again, or a claimed one taken up with mail that came since the claim, see
  // work_queue::mail_behind), and once the budget is spent all later sends
  // of this batch go through the mailbox, which is gulped after the batch
  // is done. A sender that is not an actor of this queue
  // holds appends (see appends_held). A held queue (see suspend()) has no
  // budget: its moved batch is drained before its mailbox is taken in.
  // Counted per batch, from the budget spent, not per send.
  //
  // A send to a queue this runner keeps (see keep()) joins the batch in
  // hand as well: the batch then runs the actors of several queues, in
  // the order their messages were sent, as the one queue of a one-worker
  // system does, and a conversation between queues costs an append per
  // hop instead of a hand-over between batches (see merge()). Such a
  // batch (foreign_) also runs senders that are not actors of the queue
  // in hand, whose earlier sends to it may wait in its mailbox, posted
  // while it was claimed and waited to run: their sends to it append
  // only while nothing waits there, as merge() requires of a kept queue.
  //
  // True if the envelope was sent: appended, merged, or, where a batch's
  // first merge finds no room, sent on by merge() itself (see
  // weigh_then_send()).
  bool try_append(std::uint32_t queue, void* target, void* message, run_fn run) {
    if (current_index_ != queue) return merging_ && merge(queue, target, message, run);
    if (budget_ == 0 || appends_held_ != 0 || (foreign_ && current_->queued() != 0)) return false;
    current_->batch().push(envelope{target, message, run});
    --budget_;  // after the push, which may throw: the budget counts what was sent
    return true;
  }

  // A send of the batch in hand that neither appends nor merges ends its
  // unchecked merges (see open_unchecked_merges()).
  void close_unchecked_merges() noexcept { unchecked_merges_ = 0; }

  // The stack (defaults::stack_most). A pool worker's batch runs what its
  // stack holds before its next envelope, last in first out, so that a
  // tree of actors made inside behaviours unfolds depth first, as a call
  // tree would, instead of breadth first through the batch: only the path
  // being run and the siblings waiting on it are alive, not most of the
  // tree (docs/design.md, "Depth first").
  //
  // Running a message before the batch's rest breaks no order only when
  // nothing else for its actor waits anywhere; the actor model knows that
  // (its actor has been sent nothing since it was made but messages that
  // went on a stack and have run), the runner does not. So the model asks
  // can_stack() and, if yes, push_stack()s. The runner sees to the rest:
  //
  // - The actor runs nowhere else meanwhile: its queue is the one in hand
  //   or one this runner keeps (merge()'s conditions but for the order
  //   ones), and the stack is empty before the batch hands over or any
  //   queue it holds is let go.
  // - A later send to an actor with a message on the stack goes aside,
  //   never on the stack (the model's state says one is there): into a
  //   batch or a mailbox, all of which run after the stack, since the
  //   stack runs before the batch in hand's next envelope, and the batch
  //   hands over only once the stack is empty.
  // - Whenever the stack cannot simply run next, it is flushed to the
  //   front of the batch in hand, in the order it would have run: before
  //   a behaviour waits (suspend()), and when the turn's budget is spent
  //   (run_batch), so that the queue's next turn goes on from there,
  //   depth first still. It stays ahead of everything sent after it, as
  //   on the stack. A flush happens whole or not at all
  //   (copy_queue::push_front). A turn that cannot flush for lack of
  //   memory takes nothing new on the stack and runs what it holds (at
  //   most defaults::stack_most) before it ends.
  //
  // Counted as local sends, as merged sends are (merged_).
  //
  // `unsent`: nothing was ever sent to the actor (it was made by a
  // behaviour, since). Its first message may also take its queue, if it
  // is one of this runner's own and nobody processes it or has mail
  // waiting in it: kept, as a queue absorbed by a solo turn is (see
  // absorb_all()), so that the tree's actors, spread over the worker's
  // queues as they are made, stay on its stack. Only the first: a message
  // to an actor that has run before takes its queue from nobody, so that
  // a pipeline of actors made one by one (sieve's filters) still runs on
  // several workers.
  bool can_stack(std::uint32_t queue, bool unsent) noexcept {
    if (!stack_open_ || stack_size_ == defaults::stack_most || appends_held_ != 0) return false;
    if (queue == current_index_) return true;
    if (!merging_ || !room_to_merge()) return false;
    if (kept_at_[queue] != 0) {
      const work_queue& q = queues_[queue];
      return &q != hop_.queue;
    }
    return unsent && take_for_stack(queue);
  }
  // For a message that may run on any queue and in any order (to a
  // parallel transactional actor): whether it may go on the stack, to run
  // here next. See hungry_queue() first: work goes to a hungry worker
  // before it goes on a stack.
  bool can_stack_anywhere() const noexcept {
    return stack_open_ && stack_size_ != defaults::stack_most && appends_held_ == 0;
  }
  // For the same messages: one of the queues of another pool worker that
  // is hungry (pool_worker::hungry()), whose hunger this call takes, so
  // that the message goes to it as its share of the work; no_queue if
  // none is (one load, in the common case). One message per hungry spell:
  // a tree then unfolds depth first on each worker's stack, a subtree
  // handed to a worker that ran out, instead of spreading over the
  // queues, breadth first, while the other worker looks for work (as
  // when every message went to the queues while another worker was
  // merely idle: tx_fibonacci at two workers peaked at 5 to 13 MB, and 4
  // with one worker).
  //
  // Only while this worker has work in hand besides the message (its
  // stack or the batch in hand not empty): a message that is all there is
  // to run, a chain's next link, runs here. Handed over, a chain crossed
  // to the hungry worker, which left this one hungry to take the next
  // link back, once per hungry spell: tx_static_send at two workers ran
  // its one chain on both cores in turn, and took 1.11 to 1.17 times its
  // time on one worker.
  std::uint32_t hungry_queue() noexcept {
    if (hungry_workers_ == nullptr) return no_queue;  // not a pool worker
    const std::uint32_t hungry = hungry_workers_->load(std::memory_order_relaxed);
    // This worker may count itself (hungry on a fiber's empty sweeps
    // while a behaviour of it waited, and now running that behaviour).
    if (hungry == 0 || (hungry == 1 && own_hunger_->load(std::memory_order_relaxed) == hungry_now))
      return no_queue;
    if (stack_size_ == 0 && current_ != nullptr && current_->batch().empty()) return no_queue;
    return feed_hungry();
  }
  // @pre can_stack(queue), or can_stack_anywhere() and `queue` is the one
  // in hand.
  void push_stack(std::uint32_t queue, void* target, void* message, run_fn run) noexcept {
    if (queue != current_index_) {
      // An envelope of a kept queue's actor, as a merged one (see merge()),
      // but not in the batch: a batch cut short leaves none of them behind,
      // as its stack is run first.
      foreign_ = true;
      conversed_ = true;
    }
    anywhere_ &= ~(std::uint64_t{1} << stack_size_);
    stack_[stack_size_++] = envelope{target, message, run};
    ++merged_;
  }
  // push_stack for a message that may run on any queue, in any order
  // (after can_stack_anywhere()): one a hungry worker may be given
  // instead (see give_oldest()).
  void push_stack_anywhere(void* target, void* message, run_fn run) noexcept {
    push_stack(current_index_, target, message, run);
    anywhere_ |= std::uint64_t{1} << (stack_size_ - 1);
  }
  // Posts the oldest message on the stack that may run anywhere to
  // `queue` (a hungry worker's, see hungry_queue()), straight into its
  // mailbox (executor::post_now), and takes it off the stack: in a tree unfolding depth first,
  // the oldest waits for the largest subtree, the share worth handing over (as a thief takes from
  // the cold end of a work-stealing deque). False if there is none, or
  // the post could not get the memory; nothing changed then.
  bool give_oldest(std::uint32_t queue) noexcept;

  // Whether this runner holds `queue`: it is the queue in hand, one it
  // keeps, or one held along with a queue whose behaviour waits (see
  // suspend()), so no other runner runs its actors now. For the
  // transactional model, whose serialized actors run only where their
  // home queue is held: sent home from here, a message would come back
  // to this runner's batch, or to the held queue's.
  bool holds(std::uint32_t queue) const noexcept {
    return queue == current_index_ || kept_at_[queue] != 0 || held_along_[queue] != 0;
  }

  // A send from the batch in hand to a work queue nobody processes (a
  // conversation partner, the next actor of a chain) may claim that queue
  // (work_queue::claim): the mail goes straight into its batch, nobody is
  // woken, and this runner runs that batch next, after the one in hand
  // (see drain_claims), on the core where the sender's state already is.
  // A sequential conversation thus stays on one worker whichever workers
  // own its queues, while the others sleep; without claims the owner of
  // each queue on the way is woken in turn, and the actors' state crosses
  // cores at every hop (or waits for a thread the OS has descheduled).
  //
  // Who claims: a pool worker (take_claims), from the last envelope of
  // its batch so far, once per batch, and only from a short batch
  // (defaults::claim_batch_most). A send from the middle of a batch
  // leaves the queue to its owner: the sender has more to run, and a
  // batch that fans out keeps its parallelism. A long batch is a busy
  // queue's, on a worker with work of its own: a claim there only gulps
  // the receiver's queue early, in smaller batches than its sweep would.
  // What it claims: a queue in one of its own slots, or one whose
  // worker's last sweep found nothing, or, for a queue that stealing
  // moved to another worker, one whose owner is parked on it; with
  // stealing off only its own, since placement then promises that queues
  // stay with their worker.
  //
  // The batch's later sends to that queue join the claimed batch without
  // a lock, up to defaults::claim_joins: a flood hands the queue back to
  // its owner (work_queue::pause, waking it), and this runner does not
  // claim it again, so that a producer and its consumer still run on two
  // workers. A batch cut short at its gulp budget hands back every claim
  // pending, for the same reason: long work is shared, not queued behind
  // this runner. A batch tries once: a burst's sends would otherwise each
  // read lines that the queue's busy owner keeps writing.
  //
  // Per-sender FIFO holds. The claim takes the mailbox first, so every
  // earlier send to that queue is ahead of this one. A later send joins
  // the claimed batch only from the batch that claimed it, where the
  // senders are actors of the queue in hand, which run nowhere else
  // meanwhile, so none of them can have sent to the claimed queue's
  // mailbox since the claim; with appends held (a parallel transactional
  // actor, an actor of no queue) its send takes the mailbox, and the
  // claim is handed back. Any other send finds the queue processed and
  // takes the mailbox, which is gulped after the claimed batch.
  //
  // A queue this runner keeps is not claimed but rejoined, without the
  // lock (see kept()).
  //
  // For the executor's post path: returns false if the send must take
  // the mailbox. Throws std::bad_alloc if the queue cannot grow; nothing
  // was sent then. The envelope's words are passed apart, as to post():
  // built on the caller's stack and read back whole, it would stall the
  // mailbox path.
  bool post_claimed(work_queue& q, std::uint32_t index, void* target, void* message, run_fn run) {
    // Not the queue in hand (a same-queue send past its budget): the
    // common case of a busy single queue pays two compares.
    return batch_serial_ != 0 && index != current_index_ &&
           (claims_count_ != 0 || hop_.queue != nullptr || (at_last_ && !claim_tried_)) &&
           claim_or_join(q, index, target, message, run);
  }

  // The common send of a conversation that does not merge (see merge()),
  // inline on the post path: from the last envelope of a short batch to a
  // queue this runner keeps, with no mail waiting there (a relaxed read of
  // its count is enough: see the order argument at keep()) and appends
  // not held, it rejoins that queue as claim_or_join would, without the
  // calls on the way there, and as a hop: the queue stays among the kept
  // ones, and the batch in hand takes its place there when it hands over
  // (see run_batch). Any other case is left to post_claimed. Loads one
  // word for a queue not kept.
  bool try_rejoin(std::uint32_t queue, void* target, void* message, run_fn run) {
    const std::uint32_t at = kept_at_[queue];
    if (at == 0 || !at_last_ || claim_tried_ || appends_held_ != 0 || batch_serial_ == 0 ||
        sends_held_)
      return false;
    TACT_ASSERT(kept_[at - 1].index == queue, "a queue marked kept is in the kept list");
    work_queue& q = *kept_[at - 1].queue;
    if (q.queued() != 0 || claims_count_ == claims_most) return false;
    claim_tried_ = true;
    q.batch().push(envelope{target, message, run});  // may throw: nothing changed then
    hop_.queue = &q;
    hop_.index = queue;
    counters.local_sends.add();
    counters.messages_sent.add();
    counters.claims.add();
    return true;
  }

  // Outbox. While a pool worker runs a batch, the sends of its actors that
  // take a mailbox (to another queue, or to the queue in hand past its
  // budget) are held back in the runner's outbox and posted at the end of
  // the batch, each queue's share under one lock and with one wake-up
  // (work_queue::post_held): a burst of sends to the queues of another
  // worker then moves each queue's line between the cores once, not once
  // per send. The outbox is also posted once full, before the batch is
  // cut short or a behaviour of it waits, and before any send of this
  // runner that does not join it takes a mailbox or claims a queue.
  //
  // FIFO per sender holds. The senders are actors of the queue in hand
  // (appends_held is off), which run nowhere else until the batch ends:
  // their sends reach each mailbox in the order they were made, ahead of
  // any later send of theirs, since the batch ends (or is cut, or waits)
  // only after the outbox is posted. Any other send made on this runner
  // meanwhile posts the outbox first (hold_send, post_claimed), so the
  // mailboxes see this runner's sends in the order it made them. A send
  // to a kept queue rejoins it only with the outbox empty (try_rejoin),
  // for the same reason.
  //
  // A held send cannot fail later: the outbox keeps a backup chunk of
  // mailbox per send it holds (copy_queue::backup), used where a
  // mailbox cannot grow when the outbox is posted. So a send that finds
  // no memory for that chunk throws std::bad_alloc, with nothing sent, as
  // a send whose mailbox cannot grow does; steady state allocates nothing.
  //
  // While another pool worker is idle, the batch's first send to each
  // queue goes at once: the idle worker must see it, to run it (or steal
  // its queue) in parallel with the rest of the sender's batch, which may
  // be long. Its later sends to that queue are held: the first has woken
  // the queue's worker, which runs them after it in any case, and they
  // reach it in groups (when the outbox fills, at most 254 sends on, 128
  // for one queue, or when the batch ends) instead of one lock section
  // each. Posted one at a time, a flood into an actor that keeps up went
  // in gulps of a few messages, each moving the queue's lines between the
  // cores. When every worker is busy, every send is held: the receiver's
  // worker would reach it only after work of its own anyway. The idle
  // count is a hint (see executor::idle_workers); this worker's own flag
  // is exact here.
  //
  // For the executor's post path, after post_claimed: true if the send is
  // held (it counts as sent once posted).
  bool hold_send(std::uint32_t queue, void* target, void* message, run_fn run) {
    if (!outbox_open_ || appends_held_ != 0 || first_to_idle(queue)) {
      if (sends_held_) [[unlikely]]
        post_outbox_now();
      return false;
    }
    if (!outbox_->ready()) [[unlikely]]
      make_outbox_ready();
    outbox_->add(queue, target, message, run);
    sends_held_ = true;
    return true;
  }
  // The common held send, first on the mailbox path (post_to_mailbox): a
  // send to a queue the outbox already holds a send for (a flood's, or a
  // round's to its peers' queues) joins them without the executor's post
  // path, which would hold it too. post_claimed would pass it by: a claim
  // of `queue` by this batch would have taken the earlier send (it joins
  // it), and a claim made since would have posted the outbox first; a
  // hold since (try_rejoin) needs the outbox empty. hold_send's own
  // conditions are checked here: appends not held, room, and
  // first_to_idle, which posts at once the batch's first send to `queue`
  // while another worker is idle (one may have gone idle since the
  // earlier send was held: the full path then takes this one).
  bool hold_again(std::uint32_t queue, void* target, void* message, run_fn run) noexcept {
    if (!sends_held_ || appends_held_ != 0 || !outbox_->holds(queue) || !outbox_->ready() ||
        (posted_in_[queue] != serial_ && other_idle()))
      return false;
    outbox_->add(queue, target, message, run);
    return true;
  }
  // Whether a send to `queue` is the batch's first to it while another
  // pool worker is idle (see hold_send); if so, marks the queue.
  // The queue's mark first: the idle count's line is shared, and moves
  // whenever a worker goes idle or back to work; a queue already posted
  // to at once needs no look at it.
  bool first_to_idle(std::uint32_t queue) noexcept {
    if (posted_in_[queue] == serial_ || !other_idle()) return false;
    posted_in_[queue] = serial_;
    return true;
  }
  // Whether another pool worker is idle (a hint: see hold_send).
  bool other_idle() const noexcept {
    return idle_workers_->load(std::memory_order_relaxed) !=
           (own_idle_->load(std::memory_order_relaxed) ? 1u : 0u);
  }
  // Posts what the outbox holds (see hold_send), if anything.
  void post_outbox() noexcept {
    if (sends_held_) post_outbox_now();
  }
  // Posts it and takes no more sends: a behaviour waits, or a resumed one
  // (see suspend()) has returned.
  void close_outbox() noexcept {
    post_outbox();
    outbox_open_ = false;
  }

  // While one is alive on this runner's thread, sends take the mailbox even
  // to the queue in hand. For code that sends for an actor that is not an
  // actor of that queue: a parallel transactional actor runs on whichever
  // queue its message came to, so an earlier send of its own may wait in
  // this queue's mailbox, sent from another queue, and joining the batch
  // would overtake it. A count, not a flag: an on_commit action holding
  // appends may be suspended (an ask) while other contexts take and
  // release holds on this runner, in any order; a resumed behaviour has no
  // budget anyway.
  class appends_held {
   public:
    explicit appends_held(runner& r) noexcept : r_{r} {
      ++r_.appends_held_;
      r_.close_unchecked_merges();
    }
    ~appends_held() { --r_.appends_held_; }
    appends_held(const appends_held&) = delete;
    appends_held& operator=(const appends_held&) = delete;

   private:
    runner& r_;
  };

  // One of the queues this runner owns now, round robin, for messages that
  // may run on any queue (transactional sends) and, mostly, for the home
  // of an actor that a behaviour here creates (see new_actor_home()): they
  // stay with this runner unless a thief takes their queue. Any queue for
  // a runner that owns none.
  std::uint32_t next_own_queue() noexcept;
  // The home of an actor that a behaviour here creates: one of this
  // runner's own queues, round robin, so that stealing can share a fan
  // out between workers; but the queue in hand, on a pool worker, if
  // `beside`: its creator, itself made by a behaviour, runs its first
  // message (a node of a tree being unfolded), so that the tree's
  // messages take the stack (see can_stack()) without taking queues, and
  // it unfolds depth first on this worker. An actor that makes others
  // later in its life (a pipeline's stage, sieve's filters) spreads them.
  std::uint32_t new_actor_home(bool beside) noexcept;

  // Pins this runner in the executor's epochs, before it loads a pointer
  // that others may retire (see epochs::pin); it stays pinned until the
  // batch in hand is done or its behaviour suspends.
  void pin() noexcept { epochs_.pin(index_); }
  // Once pinned: load() (a shared pointer others may retire), marked as
  // in use by this runner until its next protect() (see epochs::protect).
  template <class Load>
  auto protect(Load load) noexcept {
    return epochs_.protect(index_, load);
  }
  // Hands the object of `link` to the epochs: link->free(link) runs once
  // no runner may still hold it.
  void retire(retired_link* link) noexcept { epochs_.retire(index_, link); }

  // Runs q's batch, or as much of it as system_config::gulp_budget allows:
  // once that has passed, the rest stays for q's next gulp, ahead of the
  // mail that came since (work_queue::pause), and the other queues get
  // their turn first. @pre this thread gulped q: q is being_processed
  // and its batch is this runner's until q is finished or paused, which
  // this does (unless a behaviour suspended, see suspend(): then the
  // queue stays held here). Returns the envelopes run.
  std::uint64_t process(work_queue& q, std::uint32_t index);
  // The same for a runner that helps on behalf of a waiter (a guest): also
  // once `limit` says enough, between two envelopes, so the waiter is late
  // by at most one message's run.
  std::uint64_t process(work_queue& q, std::uint32_t index, const help_limit& limit);
  // The same with a budget of the caller's instead of the gulp budget (a
  // sponsor's run, see sponsor::run_pending), and, with a `deadline`, until
  // then at most.
  std::uint64_t process_at_most(work_queue& q, std::uint32_t index, std::uint64_t most);
  std::uint64_t process_at_most(work_queue& q, std::uint32_t index, std::uint64_t most,
                                std::chrono::steady_clock::time_point deadline);
  // Runs the next envelope of q's batch (the deterministic executor, one
  // message per step). @pre as for process(), and the batch is not empty;
  // finishes q once its batch is. May nest: a behaviour that waits runs
  // steps of other queues inside its own.
  void step(work_queue& q, std::uint32_t index);

  // ---- behaviours that wait (suspension.cpp) ----

  // Whether the code running is a behaviour that suspend() may suspend:
  // one run from a batch by a runner with a fiber loop.
  bool can_suspend() const noexcept { return suspends() && current_ != nullptr; }
  // Whether this runner's behaviours may suspend at all.
  bool suspends() const noexcept { return suspensions_ != nullptr; }
  // @pre can_suspend(). Suspends the running behaviour until `c.poll` is
  // ready, and runs other work meanwhile. Its actor stays busy (its later
  // messages wait) and its queue stays being_processed, held by this
  // runner, which runs the queue's other actors in the meantime (see
  // held_queue). Throws (std::bad_alloc, or std::system_error if no stack
  // can be mapped) only before it suspends.
  void suspend(wake_condition& c);
  // Behaviours suspended here, or queues held: the runner cannot end, and
  // a guest with these must not be released.
  bool busy() const noexcept { return holding_ != 0; }
  // Resumes one suspended behaviour whose condition is ready; false if
  // none is. The calling context goes idle until needed again.
  bool resume_ready();
  // Runs what the held queues have for actors that are not busy; returns
  // how many envelopes that was.
  std::uint64_t drain_all_held();
  // Nothing to run, but behaviours wait here (or the caller's own ask,
  // `also`, whose answer wakes this runner): sleeps until a post to a
  // queue it owns or holds, an answer to one of them, or the earliest
  // deadline, whichever comes first.
  //
  // `own_queues` false: a pool worker that the governor stood down (see
  // pool_worker::wait_stood_down), whose queues the worker covering it
  // sweeps and registers on. It registers on the queues it holds only,
  // and in place of its own it wakes that worker, after its `parking`
  // store, as pool_worker::rest does: a registration of its own made
  // before the count changed may still sit on one of those queues, and
  // the woken worker registers on it anew. It does not sleep once the
  // count runs it again: the change's wake-up may have come before that
  // store, and nobody else sweeps its queues then.
  void wait(wake_condition* also = nullptr, bool own_queues = true);

 protected:
  // Only on this runner's thread, in its loop. On the native context: true
  // (the role decides whether to go on). On a fiber: false once the fibers
  // end; and while the native context waits idle at loop level the thread
  // goes back to it first, so behaviours mostly run on the thread's own,
  // larger stack.
  bool fiber_turn() noexcept;
  bool on_fiber() const noexcept;
  // When no behaviour waits here: ends the fibers and stacks beyond
  // defaults::fibers_kept (see fiber_pool::trim), so that a burst of waits
  // gives its memory back once it is over. For a runner about to idle.
  void trim_fibers() noexcept;
  // Registers as the waiter of every queue this runner owns; false if one
  // has mail, or was taken from us by a thief since we loaded its slot
  // (who then wakes us: we are parking).
  bool register_as_waiter() noexcept;
  // Claims (see post_claimed): made only by runners that turn them on (the
  // pool workers, which then drain them in their loop), so that a
  // sponsor's or a helping asker's thread never takes on work of the pool.
  void take_claims() noexcept { claims_on_ = true; }
  // Holds its batches' mailbox sends back in an outbox (see hold_send):
  // for the pool workers, which post it at every batch's end. `idle` and
  // `hunger`: the worker's own flag and state (pool_worker::hungry()),
  // counted in executor::idle_workers() and executor::hungry_workers().
  void use_outbox(const std::atomic<bool>& idle, const std::atomic<std::uint8_t>& hunger);
  bool has_claims() const noexcept { return claims_count_ != 0; }
  // Runs up to `most` claimed batches, oldest first; claims they make are
  // queued behind. Returns the envelopes run. @pre no batch in hand.
  std::uint64_t drain_claims(std::uint32_t most);
  // Hands every pending claim back to its queue's owner (work_queue::pause),
  // and lets go of the queues kept (see keep()).
  void release_claims() noexcept;
  // This runner ran dry and parked: its turns run alone again (see
  // absorb_all()) only once the governor has weighed a whole epoch begun
  // after its next batch began, and still runs it alone (see
  // executor::past_mark). That batch is never a solo turn.
  void parked_dry() noexcept;

  // Leaves the epochs (pinned lazily by a transactional dispatch) at a point
  // where this runner holds nothing read under the pin.
  void unpin() noexcept {
    if (epochs_.pinned(index_)) epochs_.unpin(index_);
  }

 private:
  struct suspensions;  // suspension.hpp
  struct suspended_behaviour;

  static void loop_of(void* self);
  void post_outbox_now() noexcept;
  void make_outbox_ready();
  bool claim_or_join(work_queue& q, std::uint32_t index, void* target, void* message, run_fn run);
  struct claim;
  void add_claim(work_queue& q, std::uint32_t index) noexcept;
  claim take_oldest_claim() noexcept;
  // Who holds a queue a claim is considered for: this runner, another
  // worker whose last sweep found nothing, or another (busy, or unknown).
  enum class holder : std::uint8_t { us, other_idle, other_busy };
  holder holder_of(const work_queue& q, std::uint32_t index) const noexcept;
  // Kept queues. A batch that claimed a queue (or rejoined one) keeps its
  // own once drained: the queue stays processed by this runner, its batch
  // empty, since the partner's answer is likely to come back to it. A send
  // to a kept queue from where a claim may be made (post_claimed) rejoins
  // it: the envelope goes into its batch, which becomes the pending claim
  // (or, in the common case, the hop: see try_rejoin), and run_batch
  // hands over to it at once, so that a conversation runs as one turn
  // within the gulp budget. A kept queue is in the kept list exactly
  // while its kept_at_ mark is set; the batch in hand never is, and a
  // hop's queue is until the hand-over, where the drained queue takes
  // its slot. Kept queues are let go
  // (finish_kept) when the run of claims ends: before the runner sweeps,
  // parks or stops, so mail others post to them meanwhile waits at most
  // for that run (see drain_claims).
  //
  // FIFO per sender, without the lock: the senders are actors of the
  // queue in hand. Their earlier sends to q went into q's batch (and ran:
  // it is empty) or into its mailbox. Those made on other threads, before
  // this runner took their queue, happen-before that take (its lock, and
  // the acquire of being_processed that pairs with the last processor's
  // release), and those made here are sequenced before; so q's count of
  // waiting mail, read relaxed, shows them unless they have been taken
  // in. Zero: the envelope may go straight into the batch. Not zero, or
  // appends held (a sender that is not an actor of the queue in hand):
  // the mailbox is taken in first, under the lock (work_queue::regulp).
  // Only this runner resets the count of a queue it processes.
  bool kept(std::uint32_t index) const noexcept { return kept_at_[index] != 0; }
  void keep(work_queue& q, std::uint32_t index) noexcept;
  // Merging (see try_append): a send to a kept queue q joins the batch in
  // hand when nothing for q's actors waits anywhere else: not in q's own
  // batch (a kept queue's is empty, but for the hop's queue), nor in its
  // mailbox (its count, read relaxed, is zero: the order argument above,
  // since the senders are actors of queues this runner holds). So each
  // sender's order holds, and q, held by this runner, runs none of its
  // actors elsewhere. It stays so until the batch has run all it merged,
  // which takes care: a batch that merged is never cut short and left for
  // its queue's next gulp (it stops merging and runs to its end, see
  // run_batch), and a behaviour of it that waits takes the kept queues
  // along into its held queue, with the queues the batch claimed, whose
  // batches would otherwise run before the rest of this one (see
  // suspend()).
  //
  // A send that does not merge goes to q's mailbox (or the outbox), and
  // no later send of the batch to q may merge past it. Each reason to
  // refuse lasts as long as the batch: q's count stays above zero (only
  // this runner takes its mail in); q stays the hop's queue or not kept
  // (both change only when one batch hands over to the next, after the
  // outbox is posted); appends held, a send takes the mailbox, not the
  // outbox, and q's count rises; and merging_, once off, stays off for
  // the batch. Merging goes off once the batch holds
  // defaults::claim_joins envelopes: a flood between two queues is a
  // producer and its consumer, which should run on two workers, as a
  // claim's flood is handed back (see post_claimed); in a solo turn, only
  // at solo_most() (see absorb_all()).
  //
  // The batch's size is read at the batch's first merge, before it joins,
  // and then only after as many merges as it would take to reach
  // defaults::merge_reading_reach from there (merges_left_; in a solo
  // turn, the bound itself): a flood is seen by the time merges alone
  // have carried the batch that far. A batch found at the bound already
  // (a backlog of its own queue's mail) takes no merge at all: one merged
  // envelope would make its whole backlog run past the gulp budget (a
  // flood of 20,000 two-microsecond messages ran as one 40 ms turn while
  // the worker's other queues waited). What else grows the batch in hand
  // meanwhile is bounded on its own (same-queue appends by the budget,
  // the stack by defaults::stack_most) and is seen at the next reading. A
  // conversation's batch holds one or two envelopes; reading its size at
  // every merge cost each hop about a nanosecond, a seventh of a hop (the
  // post path kept more registers for it), and a reading every 15 merges
  // still cost thread_ring at two workers a tenth of its time.
  // The queue is found from its index, not from the kept list: the load
  // of its count then need not wait for the load of its mark. In a turn
  // run alone the looks at the count and the hop are made once for every
  // kept queue, and until something closes them the mark alone decides
  // (see open_unchecked_merges()).
  bool merge(std::uint32_t queue, void* target, void* message, run_fn run) {
    if (unchecked_merges_ != 0 && kept_at_[queue] != 0) {
      join_batch(target, message, run);
      if (--unchecked_merges_ == 0) [[unlikely]]
        weigh_unchecked_merges();
      return true;
    }
    if (kept_at_[queue] == 0 || appends_held_ != 0) return false;
    const work_queue& q = queues_[queue];
    if (&q == hop_.queue || q.queued() != 0) return false;
    if (--merges_left_ == 0) [[unlikely]] {
      weigh_then_send(queue, target, message, run);
      return true;
    }
    join_batch(target, message, run);
    return true;
  }
  // A merge that reads the batch's size first (weigh_merges()): it joins
  // if there is room, and else sends the envelope on itself, as post()
  // does after a merge refused (try_rejoin, then the mailbox). So the
  // send is done either way and post()'s call of it is its last: the post
  // path keeps no register across it (with a refusal to act on, post kept
  // the envelope's words in more registers, saved and restored on every
  // send).
  [[gnu::cold, gnu::noinline]] void weigh_then_send(std::uint32_t queue, void* target,
                                                    void* message, run_fn run);
  // Whether the batch in hand may take another queue's envelope (a merge,
  // or one on the stack, which a budget spent flushes into the batch):
  // counts it, and reads the batch's size when due.
  bool room_to_merge() noexcept { return --merges_left_ != 0 || weigh_merges(); }
  // A merged envelope into the batch in hand, counted as a local send;
  // the batch now runs other queues' actors (foreign_, mixed_), and its
  // queue conversed. Throws std::bad_alloc with nothing changed.
  [[gnu::always_inline]] void join_batch(void* target, void* message, run_fn run) {
    current_->batch().push(envelope{target, message, run});
    ++merged_;
    foreign_ = true;
    mixed_ = true;
    conversed_ = true;
  }
  // Reads the batch's size for merge(), before the merge joins: false,
  // and merging goes off, at the bound; else merges_left_ counts the
  // merges until the next reading.
  [[gnu::cold]] bool weigh_merges() noexcept;
  // The batch's size at which merging stops, and how far merges may carry
  // it between two readings of its size.
  std::uint32_t merge_bound() const noexcept { return solo_ ? solo_most_ : defaults::claim_joins; }
  std::uint32_t merge_reach() const noexcept {
    return solo_ ? solo_most_ : defaults::merge_reading_reach;
  }
  // Merges without the looks, opened by absorb_all() in a solo turn, and
  // by weigh_then_send() in any batch that no other pool worker runs
  // beside (lone_): once every queue it keeps has been taken in and none
  // has mail waiting, a send to a kept queue needs no look at that
  // queue's count or at the hop, only its mark, for as long as every send
  // of the batch merges or appends. Whatever else happens closes them for
  // the rest of the batch (the order argument is at the definition).
  void open_unchecked_merges() noexcept;
  // Opens the unchecked merges, or goes on with them once their count ran
  // down, nothing having closed them (a close sets the count to 0 without
  // this): the batch's size is read, as weigh_merges() does, and below the
  // bound they go on for what is left of the reach; at the bound merging
  // stops. A conversation keeps its batch at one or two envelopes however
  // long its turn: its hops would otherwise take merge()'s looks after the
  // first reach.
  [[gnu::cold, gnu::noinline]] void weigh_unchecked_merges() noexcept;
  // A turn of a worker that runs alone (the governor stood the others
  // down, see executor::alone): at its first batch's start, every other
  // queue it sweeps that nobody processes is taken into that batch and
  // kept (work_queue::absorb), so that the turn runs the actors of all its
  // queues as one batch, as a one-worker system's one queue does, and
  // their sends merge (up to a longer batch than otherwise: there is no
  // other worker to share a flood with). At the batch's start nothing has
  // been sent yet, so nothing of the batch's actors waits in the outbox:
  // the order argument of merge() holds for what the absorbed queues
  // held. Only up to solo_most() envelopes in all: a batch that holds
  // other queues' envelopes runs to its end once its budget is spent (see
  // run_batch), so a backlog (in the batch in hand or in a queue to take
  // in) is left to gulps, which the budget can cut short.
  void absorb_all(const work_queue& in_hand) noexcept;
  void unkeep(std::uint32_t index) noexcept;
  [[gnu::always_inline]] inline void keep_instead(work_queue& q, std::uint32_t index,
                                                  std::uint32_t instead) noexcept;
  bool rejoin(work_queue& q, std::uint32_t index, void* target, void* message, run_fn run);
  void flush_stack();
  bool flush_stack_if_possible() noexcept;
  bool take_for_stack(std::uint32_t index) noexcept;
  [[gnu::cold]] std::uint32_t feed_hungry() noexcept;
  // The hop pending (see try_rejoin) becomes an ordinary claim of the
  // batch in hand, its queue no longer kept: for anything but the plain
  // hand-over (a later send of the batch, a cut, a wait, an older claim
  // pending), which the claim code then handles as for any claim.
  void hop_to_claim() noexcept;
  void record_claim(work_queue& q, std::uint32_t index) noexcept;
  void finish_kept() noexcept;
  void count_appended() noexcept;
  [[gnu::always_inline]] inline void begin_batch(work_queue& q, std::uint32_t index) noexcept;
  // begin_batch's bookkeeping, for a batch that took `fresh` envelopes from
  // the mailbox and may append `budget`.
  [[gnu::always_inline]] inline void start_batch(work_queue& q, std::uint32_t index,
                                                 std::uint32_t fresh, std::uint32_t budget) noexcept;
  [[gnu::always_inline]] inline void end_batch(work_queue& q, std::uint32_t index) noexcept;
  template <class Enough>
  std::uint64_t run_batch(work_queue& q, std::uint32_t index, std::uint64_t most, Enough enough);
  // Sends posted that weigh as one message run in a batch's work (see
  // run_batch): a post costs a lock section, a message run a call.
  static constexpr std::uint64_t sends_per_unit = 8;
  // Whether the gulp budget of a batch that has done `work` (messages run
  // plus sends posted, see run_batch) is spent, reading the clock only now
  // and then (see runner.cpp).
  struct gulp_clock {
    std::uint64_t next = 2;     // the work at which to read it next
    std::uint64_t started = 0;  // ... at which it was first read; 0: not yet
    std::chrono::steady_clock::time_point start{};
  };
  bool gulp_spent(std::uint64_t work, gulp_clock& c) noexcept {
    return work >= c.next && gulp_budget_.count() != 0 && read_gulp_clock(work, c);
  }
  // Also keeps what a unit of work took, as last measured (work_cost_).
  [[gnu::noinline]] bool read_gulp_clock(std::uint64_t work, gulp_clock& c) noexcept;
  // The most envelopes a turn run alone takes in and merges (see
  // absorb_all()): as many as its gulp budget fits at the cost of work
  // last measured, at least defaults::claim_joins, at most
  // defaults::solo_batch_most, which is also the bound without a budget
  // or a measure. Such a batch is not cut at its budget but runs to its
  // end, so the count alone would let 4,096 messages of ten microseconds
  // hold the worker's queues for 40 ms, the other workers unable to take
  // any of it when the governor brings them back.
  std::uint32_t solo_most() const noexcept;
  std::uint64_t drain_held(work_queue& q, std::uint32_t index);
  void run_held(work_queue& q, std::uint32_t index, const envelope& e);
  void run_stash(work_queue& q, std::uint32_t index, void* target);
  std::uint64_t after_resume(work_queue& q, std::uint32_t index, void* target);

  executor& owner_;
  epochs& epochs_;
  const std::uint32_t index_;
  const std::uint32_t local_batch_;
  const std::chrono::nanoseconds gulp_budget_;  // system_config::gulp_budget; 0: no limit
  std::chrono::nanoseconds work_cost_{0};       // see read_gulp_clock; 0: not measured yet
  std::uint32_t solo_most_ = defaults::solo_batch_most;  // this turn's solo_most()
  const block owned_;
  work_queue* current_ = nullptr;           // queue whose batch is being processed
  std::uint32_t current_index_ = no_queue;  // ... and its index
  std::uint32_t budget_ = 0;                // same-queue appends left for this batch
  std::uint32_t budget_start_ = 0;          // ... and at its start
  std::uint32_t appends_held_ = 0;          // appends_held alive: no appends at all
  void* running_target_ = nullptr;          // target of the envelope being run
  // The behaviour just run was suspended and resumed: its batch was handed
  // over (see held_queue). Kept per context: suspend() clears it for the
  // context that takes over and sets it when resumed.
  bool resumed_ = false;
  std::uint32_t holding_ = 0;  // behaviours suspended plus queues held
  std::uint32_t spread_ = 0;   // next own slot for next_own_queue()
  struct kept_queue {
    work_queue* queue;
    std::uint32_t index;
  };
  // Claims pending, oldest first, in a ring; each names the batch that
  // made it by a serial (never 0). A released claim's queue is null.
  struct claim {
    work_queue* queue;
    std::uint32_t index;
    std::uint32_t serial;
  };
  static constexpr std::uint32_t claims_most = 4;
  claim claims_[claims_most] = {};
  std::uint32_t claims_first_ = 0;
  std::uint32_t claims_count_ = 0;
  // A kept queue the batch in hand rejoined by try_rejoin, still among the
  // kept ones; null if none. Counted as a claim, but not in the ring.
  kept_queue hop_ = {};
  std::uint32_t batch_serial_ = 0;  // the batch in hand's, if it may claim; else 0
  std::uint32_t serial_ = 0;        // the last serial given
  bool at_last_ = false;  // the envelope running is the last (so far) of a short batch
  bool claim_tried_ = false;        // the batch in hand has tried to claim
  std::uint32_t flooded_ = no_queue;  // the last queue a claim was handed back for a flood
  bool claims_on_ = false;
  bool conversed_ = false;  // the batch in hand claimed a queue, or rejoined a kept one
  // Sends to kept queues may still join the batch in hand (see merge()):
  // set as a pool worker's batch begins, off for the rest of it once off.
  bool merging_ = false;
  // Sends to kept queues that joined the batch in hand (see merge()),
  // counted as local sends.
  std::uint32_t merged_ = 0;
  // Merges before merge() next reads the batch's size.
  std::uint32_t merges_left_ = 0;
  // Merges the batch in hand may still take without looking at the
  // receiving queue (see open_unchecked_merges()); 0: none.
  std::uint32_t unchecked_merges_ = 0;
  // The batch in hand runs envelopes of kept queues' actors, merged,
  // absorbed or stacked: some of them may not have run yet.
  bool foreign_ = false;
  // ... and some of them went into its copy queue, not only on the stack:
  // it cannot be cut short (see run_batch).
  bool mixed_ = false;
  bool solo_ = false;  // the batch in hand belongs to a solo turn (see absorb_all())
  // No other pool worker ran as run_batch began the batches in hand (this
  // one runs alone, or is the only one): their merges may skip their
  // looks (see open_unchecked_merges()).
  bool lone_ = false;
  bool cut_ = false;        // the last process() stopped a conversation at its budget
  // New messages may go on the stack (see can_stack()): a pool worker's
  // batch runs, its budget not yet spent.
  bool stack_open_ = false;
  std::uint32_t stack_size_ = 0;
  // Per stack entry, bit i: stack_[i] may run anywhere (push_stack_anywhere).
  std::uint64_t anywhere_ = 0;
  static_assert(defaults::stack_most <= 64, "a bit per stack entry");
  bool outbox_open_ = false;  // a batch (or a resumed behaviour) runs: its mailbox sends may be held
  // !outbox_->empty(), kept here on the batch state's line: try_rejoin,
  // on a conversation's every hop, reads it instead of the outbox.
  bool sends_held_ = false;
  // Queues kept (see keep()), as many as there are pool queues, and per
  // queue index (sponsors' included, never kept) its place among them
  // plus one (0: not kept).
  std::unique_ptr<std::uint32_t[]> kept_at_;
  // Per queue index: held along with a held queue (see suspend()).
  std::unique_ptr<std::uint8_t[]> held_along_;
  const padded<work_queue>* const queues_;  // the executor's, by index
  std::unique_ptr<kept_queue[]> kept_;
  std::uint32_t kept_count_ = 0;
  const fiber_loop loop_;
  std::unique_ptr<suspensions> suspensions_;  // null if it never suspends
  std::unique_ptr<outbox> outbox_;            // null unless use_outbox()
  // Per queue, the serial of the last batch that posted to it at once
  // while a worker was idle (see first_to_idle); with the outbox only,
  // whose runners take claims, so each batch has a serial of its own. A
  // serial that wraps round to a queue's old mark only holds that batch's
  // first send to it until the batch ends.
  std::unique_ptr<std::uint32_t[]> posted_in_;
  const std::atomic<std::uint32_t>* idle_workers_ = nullptr;  // executor::idle_workers()
  const std::atomic<bool>* own_idle_ = nullptr;                // ... of which this one's
  const std::atomic<std::uint32_t>* hungry_workers_ = nullptr;  // executor::hungry_workers()
  const std::atomic<std::uint8_t>* own_hunger_ = nullptr;       // ... this one's state
  // The epochs weighed from which this runner's turns may run alone, or
  // ran_dry until its first batch after a park (see parked_dry()).
  static constexpr std::uint64_t ran_dry = ~std::uint64_t{0};
  std::uint64_t solo_from_ = 0;
  // The stack (see can_stack()), top last; empty between batches.
  envelope stack_[defaults::stack_most];

  // The fields above are the batch state, read and written on every
  // message by this runner's thread alone. The statistics and the parker
  // come after them, in that order, so that the parker's word, which other
  // threads write (wake) and read (thieves, keep_watch), sits on other
  // cache lines than the batch state: on the first, every wake-up and
  // every look at a parked worker would take that line from its owner.
 public:
  // Written only on this runner's thread (see worker_counters).
  worker_counters counters;

 protected:
  parker parker_;
};

// The runner on this thread, if any (of whichever executor). constinit: no
// dynamic initialization, so reading it needs no guard call.
extern constinit thread_local runner* this_thread_runner __attribute__((tls_model("initial-exec")));

}  // namespace tact::detail
