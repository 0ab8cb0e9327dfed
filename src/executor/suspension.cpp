#include <algorithm>
#include <chrono>
#include <new>
#include <utility>

#include "executor/executor.hpp"
#include "executor/suspension.hpp"
#include "support/reserve.hpp"

// Behaviours that wait (xTActors, ASK inside an actor). A behaviour that
// asks is suspended on its context (see fiber_pool) and the runner goes on
// with other work on another context; the behaviour's queue stays
// being_processed, held by this runner, and is run from the held_queue,
// its busy actors' messages stashed until their behaviour has finished.
// All of it happens on the runner's own thread: a context is resumed by
// the runner that suspended it, so thread-local state (the running runner,
// the transaction in progress, the caches that compiled code may keep of
// thread-local addresses) never sees a behaviour change threads.
namespace tact::detail {

void runner::suspend(wake_condition& c) {
  TACT_ASSERT(can_suspend(), "only a behaviour run from a batch by a runner with fibers suspends");
  suspensions& s = *suspensions_;
  work_queue& q = *current_;
  const std::uint32_t index = current_index_;
  void* const target = running_target_;
  // What can fail comes first, before anything changes. The stack goes
  // into the batch, which moves to the held queue below (see can_stack()):
  // nothing goes on it again until this behaviour's batch has ended.
  if (stack_size_ != 0) flush_stack();
  stack_open_ = false;
  if (s.fibers.prepare()) counters.fibers_made.add();
  reserve_at_least(s.suspended, s.suspended.size() + 1);
  held_queue* held = s.find_held(q);
  if (held == nullptr) {
    // Room for every entry in both lists, so that moving one from held
    // to spare_held (when a queue is let go) never allocates.
    const std::size_t entries =
        s.held.size() + s.spare_held.size() + (s.spare_held.empty() ? 1 : 0);
    reserve_at_least(s.held, entries);
    reserve_at_least(s.spare_held, entries);
    if (s.spare_held.empty())
      s.spare_held.push_back(std::make_unique<held_queue>(owner_.config().copy_queue_floor));
  }
  held_queue* const entry = held != nullptr ? held : s.spare_held.back().get();
  // A batch that merged envelopes of kept queues' actors (see merge())
  // holds those queues with it while it waits: room for them first.
  const bool merged = held == nullptr && foreign_;
  if (merged) reserve_at_least(entry->also, kept_count_ + claims_count_ + 1);
  // The last that can fail: it changes the entry, if it does not throw.
  if (entry->find(target) == nullptr) entry->make_busy(target);
  if (held == nullptr) {
    // The first behaviour of this batch to wait. The rest of the batch
    // moves to the held queue (the queue's own batch, left empty, ends
    // the process() loop once this behaviour returns), and what the batch
    // appended is counted now, since process() will not reach its end.
    // From here every send to this queue takes the mailbox (the budget is
    // 0 while it is held), which the holder takes in only once the moved
    // batch is drained: per-sender FIFO holds as in try_append.
    count_appended();
    s.held.push_back(std::move(s.spare_held.back()));
    s.spare_held.pop_back();
    ++holding_;
    held = s.held.back().get();
    held->queue = &q;
    held->index = index;
    held->batch.swap(q.batch());
    if (merged) {
      // The rest of the batch may hold messages for the kept queues'
      // actors, and this behaviour may be one of theirs: those queues
      // stay held with q, their mail run from the held queue, until it is
      // let go. So do the queues this batch claimed (its hop among them):
      // their batches, which hold later messages of the same senders, run
      // from the held queue too, after what this batch left, instead of
      // before it from the claims. Pushes into reserved room: no throw.
      if (hop_.queue != nullptr) hop_to_claim();
      for (std::uint32_t i = 0; i < claims_count_; ++i) {
        claim& c = claims_[(claims_first_ + i) % claims_most];
        if (c.serial != batch_serial_ || c.queue == nullptr) continue;
        held->also.push_back(c.queue);
        held_along_[c.index] = 1;
        c.queue = nullptr;  // released: drain_claims skips it
      }
      for (std::uint32_t i = 0; i < kept_count_; ++i) {
        kept_at_[kept_[i].index] = 0;
        held_along_[kept_[i].index] = 1;
        held->also.push_back(kept_[i].queue);
      }
      kept_count_ = 0;
    }
  }
  // Its sends so far are posted before it waits (the reply it waits for
  // may need one).
  close_outbox();
  // The batch state belongs to the behaviour: the next context starts clean.
  // A hop it made waits in the ring, as any claim, for the contexts that
  // run meanwhile.
  if (hop_.queue != nullptr) hop_to_claim();
  budget_ = 0;
  batch_serial_ = 0;
  merging_ = false;
  close_unchecked_merges();
  current_ = nullptr;
  current_index_ = no_queue;
  running_target_ = nullptr;
  unpin();
  // An ambient_scope the behaviour opened is its own, not the runner's.
  executor* const scope = executor::scope();
  const std::uint32_t home = executor::scope_home();
  if (scope != nullptr) executor::set_scope(nullptr, no_queue);
  suspended_behaviour me{&c, &s.fibers.running()};
  s.suspended.push_back(&me);
  ++holding_;
  counters.suspensions.add();
  resumed_ = false;
  s.fibers.suspend();
  // resume_ready() took `me` off the list and switched back here. The
  // queue is held now: no budget, so the rest of this behaviour's sends to
  // it take the mailbox, behind anything it sent there before.
  counters.resumptions.add();
  if (scope != nullptr) executor::set_scope(scope, home);
  current_ = &q;
  current_index_ = index;
  budget_ = 0;
  merging_ = false;
  stack_open_ = false;
  batch_serial_ = 0;  // a resumed behaviour claims nothing: other batches ran meanwhile
  running_target_ = target;
  resumed_ = true;
  // The rest of its run holds its mailbox sends back as a batch does (see
  // runner::hold_send), with a serial of its own so that its first send to
  // each queue goes at once while a worker idles; they are posted when it
  // waits again (above) or returns (run_batch, run_held and run_stash
  // post them). Its actor runs nowhere else meanwhile, which is what the
  // outbox's order argument asks of a batch. Posted one at a time, a
  // flood sent after a wait (a producer resumed once its bounded
  // receiver has room) went in gulps of one or two messages.
  if (outbox_ != nullptr) {
    outbox_open_ = true;
    ++serial_;
  }
}

// Resumes one suspended behaviour whose condition is ready; this context
// goes idle until it is needed again. Each call looks at scan_limit
// behaviours at most, going round the list from where the last one
// stopped, so a runner with many waiting behaviours pays a constant per
// call (a full look after every suspension made n suspensions cost n^2),
// and a ready one is found within count / scan_limit calls. Deadlines are
// judged against the clock read on every deadline_polls-th call (the
// clock costs more than the polls), never later than the truth, and
// wait() looks at them all, against a fresh clock, before it sleeps: a
// timeout is late by a few sweeps at most.
bool runner::resume_ready() {
  if (!suspends()) return false;
  suspensions& s = *suspensions_;
  if (s.suspended.empty()) return false;
  if (--s.polls_to_deadlines == 0) {
    s.polls_to_deadlines = suspensions::deadline_polls;
    s.clock = std::chrono::steady_clock::now();
  }
  const std::size_t looks = std::min(s.suspended.size(), suspensions::scan_limit);
  for (std::size_t k = 0; k < looks; ++k) {
    if (s.cursor >= s.suspended.size()) s.cursor = 0;
    const std::size_t i = s.cursor++;
    suspended_behaviour* b = s.suspended[i];
    wake_condition& c = *b->condition;
    if (c.poll(c, s.clock >= c.deadline) != wake_condition::ready) continue;
    s.suspended[i] = s.suspended.back();
    s.suspended.pop_back();
    --holding_;
    s.fibers.resume(*b->context);
    return true;
  }
  return false;
}

std::uint64_t runner::drain_all_held() {
  if (!suspends()) return 0;
  std::vector<std::unique_ptr<held_queue>>& held = suspensions_->held;
  std::uint64_t ran = 0;
  // drain_held() may release an entry, or suspend and find more held on return.
  for (std::size_t i = 0; i < held.size(); ++i) ran += drain_held(*held[i]->queue, held[i]->index);
  return ran;
}

// Runs what held queue q has for actors that are not busy, in order, and
// stashes the rest behind their busy actor; lets q go once it is empty and
// nothing of it is busy. Every step re-reads q and its entry: a behaviour
// run here may suspend, and other contexts run q meanwhile.
//
// A stash that cannot grow (no memory) leaves its message at the head of
// the batch, and the batch waits behind it, in order, until a later drain
// finds the memory or the busy actor's behaviour has finished; nothing else
// here needs memory, so nothing is lost and nothing ends the process.
std::uint64_t runner::drain_held(work_queue& q, std::uint32_t index) {
  std::uint64_t ran = 0;
  suspensions& s = *suspensions_;
  for (;;) {
    held_queue& h = *s.find_held(q);
    if (!h.batch.empty()) {
      const envelope e = h.batch.front();
      if (held_queue::busy_actor* b = h.find(e.target)) {
        try {
          b->stash.push_back(e);
        } catch (const std::bad_alloc&) {
          if (!std::exchange(s.stash_starved, true))
            owner_.note_memory_wait("a waiting actor's message could not be set aside");
          break;
        }
        s.stash_starved = false;
        h.batch.drop_front();
        continue;
      }
      h.batch.drop_front();
      run_held(q, index, e);
      ++ran;
      continue;
    }
    // The unlocked look first, as a sweep does: mail it misses is found
    // on a later pass, and wait() registers under the lock. The queues
    // held along with q take their turns after it, round robin.
    if (std::uint32_t gulped = 0; h.take_next(gulped)) {
      counters.gulps.add();
      counters.gulped_messages.add(gulped);
      continue;
    }
    if (h.busy.empty()) {
      // Nothing of it waits any more: the queues go (their own batches
      // are empty: take_next found nothing), the entry is kept for reuse.
      for (work_queue* also : h.also) {
        held_along_[owner_.index_of(*also)] = 0;
        also->forget_holder();
        also->finish();
      }
      h.also.clear();
      h.also_next = 0;
      h.batch.recycle();
      const auto it =
          std::find_if(s.held.begin(), s.held.end(),
                       [&](const std::unique_ptr<held_queue>& e) { return e.get() == &h; });
      s.spare_held.push_back(std::move(*it));  // room reserved by suspend()
      *it = std::move(s.held.back());
      s.held.pop_back();
      --holding_;
      q.forget_holder();
      q.finish();
    }
    break;
  }
  current_ = nullptr;
  current_index_ = no_queue;
  running_target_ = nullptr;
  unpin();
  return ran;
}

void runner::run_held(work_queue& q, std::uint32_t index, const envelope& e) {
  const behaviour_local_kept kept;
  current_ = &q;
  current_index_ = index;
  budget_ = 0;
  running_target_ = e.target;
  e.run(e.target, e.message);
  counters.messages_processed.add();
  if (resumed_) [[unlikely]] {
    close_outbox();
    resumed_ = false;
    run_stash(q, index, e.target);
  }
}

// The behaviour of `target` has finished after waiting: its stashed
// messages run now, in order, before anything later for it (which the
// drain keeps stashing while it is busy). One that waits again keeps it
// busy; its stash carries on here once that one is done.
void runner::run_stash(work_queue& q, std::uint32_t index, void* target) {
  for (;;) {
    held_queue& h = *suspensions_->find_held(q);
    held_queue::busy_actor* found = h.find(target);
    TACT_ASSERT(found != nullptr, "a resumed behaviour's actor is busy until its stash has run");
    held_queue::busy_actor& b = *found;
    if (b.idle()) {
      h.erase(target);
      return;
    }
    const envelope e = b.take();
    const behaviour_local_kept kept;
    current_ = &q;
    current_index_ = index;
    budget_ = 0;
    running_target_ = target;
    e.run(e.target, e.message);
    counters.messages_processed.add();
    if (resumed_) [[unlikely]]
      close_outbox();
    resumed_ = false;
  }
}

std::uint64_t runner::after_resume(work_queue& q, std::uint32_t index, void* target) {
  resumed_ = false;
  run_stash(q, index, target);
  return drain_held(q, index);
}

// Parks while behaviours wait here: like a pool worker's park, registered on
// the queues it owns, and also on the queues it holds (as their holder,
// since a queue's slot may be another worker's by now), but not counted as
// parked (the system is not quiescent while a behaviour waits), and for at
// most until the earliest deadline, so a timeout needs no polling.
//
// No lost wake-up: an answer claims its slot (sequentially consistent)
// before it wakes the asker's runner (parker::wake, an exchange, also
// sequentially consistent), and we poll the slots after the parker is
// `parking`. Either our poll sees the claim, or the claim, and so the
// exchange, come after our store: the exchange then finds us parking (our
// commit to waiting fails) or waiting (it wakes the futex).
void runner::wait(wake_condition* also, bool own_queues) {
  TACT_ASSERT(this_thread_runner == this, "a runner waits on its own thread");
  epochs_.abandon(index_);
  const auto now = std::chrono::steady_clock::now();
  auto earliest = std::chrono::steady_clock::time_point::max();
  const auto registered = [&] {
    if (!own_queues)
      owner_.wake_covering(index_);
    else if (!register_as_waiter())
      return false;
    if (suspends())
      for (const std::unique_ptr<held_queue>& h : suspensions_->held) {
        if (!h->queue->register_holder(this)) return false;
        for (work_queue* also : h->also)
          if (!also->register_holder(this)) return false;
      }
    return true;
  };
  const auto due = [&] {
    bool ready = false;
    const auto look = [&](wake_condition& c) {
      earliest = std::min(earliest, c.deadline);
      ready = c.poll(c, now >= c.deadline) != wake_condition::waiting || ready;
    };
    if (also != nullptr) look(*also);
    if (suspends())
      for (suspended_behaviour* b : suspensions_->suspended) look(*b->condition);
    return ready;
  };
  const auto abort = [&] {
    return due() || (!own_queues && !owner_.resting(index_, std::memory_order_seq_cst));
  };
  if (!parker_.park(registered, abort, parker::waiting)) return;
  if ((suspends() && suspensions_->stash_starved) || owner_.has_postponed())
    earliest = std::min(earliest, now + defaults::memory_retry);
  if (earliest == std::chrono::steady_clock::time_point::max())
    parker_.sleep(parker::waiting);
  else
    parker_.sleep_for(parker::waiting, earliest - now);
  parker_.move(parker::waiting, parker::running);
}

}  // namespace tact::detail
