#include <algorithm>
#include <cassert>
#include <chrono>

#include "executor/executor.hpp"
#include "executor/worker.hpp"
#include "support/futex.hpp"

// Behaviours that wait (xTActors, ASK inside an actor). A behaviour that
// asks is suspended on its context (see fiber_pool) and the worker goes on
// with other work on another context; the behaviour's queue stays
// being_processed, held by this worker, and is run from the held_queue,
// its busy actors' messages stashed until their behaviour has finished.
// All of it happens on the worker's own thread: a context is resumed by
// the worker that suspended it, so thread-local state (the running worker,
// the transaction in progress, the caches that compiled code may keep of
// thread-local addresses) never sees a behaviour change threads.
namespace tact::detail {

held_queue* worker::find_held(const work_queue& q) noexcept {
  for (const std::unique_ptr<held_queue>& h : held_)
    if (h->queue == &q) return h.get();
  return nullptr;
}


void worker::suspend(wake_condition& c) {
  work_queue& q = *current_;
  const std::uint32_t index = current_index_;
  void* const target = running_target_;
  // What can fail comes first, before anything changes.
  if (fibers_.prepare()) counters.fibers_made.add();
  suspended_.reserve(suspended_.size() + 1);
  held_queue* held = find_held(q);
  if (held == nullptr) {
    // Room for every entry in both lists, so that moving one from held_
    // to spare_held_ (when a queue is let go) never allocates.
    const std::size_t entries = held_.size() + spare_held_.size() + (spare_held_.empty() ? 1 : 0);
    held_.reserve(entries);
    spare_held_.reserve(entries);
    if (spare_held_.empty())
      spare_held_.push_back(std::make_unique<held_queue>(owner_.config().copy_queue_floor));
    spare_held_.back()->busy.reserve(1);
  } else if (held->find(target) == nullptr) {
    held->busy.reserve(held->busy.size() + 1);
  }
  if (held == nullptr) {
    // The first behaviour of this batch to wait. The rest of the batch
    // moves to the held queue (the queue's own batch, left empty, ends
    // the process() loop once this behaviour returns), and what the batch
    // appended is counted now, since process() will not reach its end.
    // From here every send to this queue takes the mailbox (the budget is
    // 0 while it is held), which the holder takes in only once the moved
    // batch is drained: per-sender FIFO holds as in try_append.
    const std::uint32_t appended = local_batch_ - budget_;
    counters.local_sends.add(appended);
    counters.messages_sent.add(appended);
    held_.push_back(std::move(spare_held_.back()));
    spare_held_.pop_back();
    held = held_.back().get();
    held->queue = &q;
    held->index = index;
    held->batch.swap(q.batch());
  }
  if (held->find(target) == nullptr) held->busy.push_back({target, {}, 0});
  // The batch state belongs to the behaviour: the next context starts clean.
  budget_ = 0;
  current_ = nullptr;
  current_index_ = no_queue;
  running_target_ = nullptr;
  unpin();
  // An ambient_scope the behaviour opened is its own, not the worker's.
  executor* const scope = executor::scope();
  const std::uint32_t home = executor::scope_home();
  if (scope != nullptr) executor::set_scope(nullptr, no_queue);
  suspended_behaviour me{&c, &fibers_.running()};
  suspended_.push_back(&me);
  counters.suspensions.add();
  resumed_ = false;
  fibers_.suspend();
  // resume_ready() took `me` off the list and switched back here. The
  // queue is held now: no budget, so the rest of this behaviour's sends to
  // it take the mailbox, behind anything it sent there before.
  if (scope != nullptr) executor::set_scope(scope, home);
  current_ = &q;
  current_index_ = index;
  budget_ = 0;
  running_target_ = target;
  resumed_ = true;
}

// Resumes one suspended behaviour whose condition is ready; this context
// goes idle until it is needed again. Deadlines are checked on every
// deadline_polls-th call (the clock costs more than the polls), and always
// by wait() before it sleeps, so a timeout is late by a few sweeps at most.
bool worker::resume_ready() {
  if (suspended_.empty()) return false;
  auto now = std::chrono::steady_clock::time_point::min();
  if (--polls_to_deadlines_ == 0) {
    polls_to_deadlines_ = deadline_polls;
    now = std::chrono::steady_clock::now();
  }
  for (std::size_t i = 0; i < suspended_.size(); ++i) {
    suspended_behaviour* s = suspended_[i];
    wake_condition& c = *s->condition;
    if (c.poll(c, now >= c.deadline) != wake_condition::ready) continue;
    suspended_[i] = suspended_.back();
    suspended_.pop_back();
    fibers_.resume(*s->context);
    return true;
  }
  return false;
}

std::uint64_t worker::drain_all_held() {
  std::uint64_t ran = 0;
  // drain_held() may release an entry, or suspend and find more held on return.
  for (std::size_t i = 0; i < held_.size(); ++i) ran += drain_held(*held_[i]->queue, held_[i]->index);
  return ran;
}

// Runs what held queue q has for actors that are not busy, in order, and
// stashes the rest behind their busy actor; lets q go once it is empty and
// nothing of it is busy. Every step re-reads q and its entry: a behaviour
// run here may suspend, and other contexts run q meanwhile.
std::uint64_t worker::drain_held(work_queue& q, std::uint32_t index) {
  std::uint64_t ran = 0;
  for (;;) {
    held_queue& h = *find_held(q);
    if (!h.batch.empty()) {
      const envelope e = h.batch.pop();
      if (held_queue::busy_actor* b = h.find(e.target)) {
        b->stash.push_back(e);
        continue;
      }
      run_held(q, index, e);
      ++ran;
      continue;
    }
    // The unlocked look first, as a sweep does: mail it misses is found
    // on a later pass, and wait() registers under the lock.
    if (!q.looks_empty() && q.regulp(h.batch)) {
      counters.gulps.add();
      counters.gulped_messages.add(h.batch.size());
      continue;
    }
    if (h.busy.empty()) {
      // Nothing of it waits any more: the queue goes (its own batch has
      // been empty since it was held), the entry is kept for reuse.
      h.batch.recycle();
      const auto it = std::find_if(held_.begin(), held_.end(),
                                   [&](const std::unique_ptr<held_queue>& e) { return e.get() == &h; });
      spare_held_.push_back(std::move(*it));  // room reserved by suspend()
      *it = std::move(held_.back());
      held_.pop_back();
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

void worker::run_held(work_queue& q, std::uint32_t index, const envelope& e) {
  current_ = &q;
  current_index_ = index;
  budget_ = 0;
  running_target_ = e.target;
  e.run(e.target, e.message);
  counters.messages_processed.add();
  if (resumed_) [[unlikely]] {
    resumed_ = false;
    run_stash(q, index, e.target);
  }
}

// The behaviour of `target` has finished after waiting: its stashed
// messages run now, in order, before anything later for it (which the
// drain keeps stashing while it is busy). One that waits again keeps it
// busy; its stash carries on here once that one is done.
void worker::run_stash(work_queue& q, std::uint32_t index, void* target) {
  for (;;) {
    held_queue::busy_actor* found = find_held(q)->find(target);
    assert(found != nullptr && "a resumed behaviour's actor is busy until its stash has run");
    held_queue::busy_actor& b = *found;
    if (b.idle()) {
      find_held(q)->erase(target);
      return;
    }
    const envelope e = b.take();
    current_ = &q;
    current_index_ = index;
    budget_ = 0;
    running_target_ = target;
    e.run(e.target, e.message);
    counters.messages_processed.add();
    resumed_ = false;
  }
}

std::uint64_t worker::after_resume(work_queue& q, std::uint32_t index, void* target) {
  resumed_ = false;
  run_stash(q, index, target);
  return drain_held(q, index);
}

// Parks while behaviours wait here: like park(), registered on the queues
// it owns, and also on the queues it holds (as their holder, since a
// queue's slot may be another worker's by now), but not counted as parked
// (the system is not quiescent while a behaviour waits), and for at most
// until the earliest deadline, so a timeout needs no polling.
//
// No lost wake-up: an answer claims its slot (sequentially consistent)
// before it wakes the asker's worker (an exchange on state_, also
// sequentially consistent), and we poll the slots after storing
// `parking`. Either our poll sees the claim, or the claim, and so the
// exchange, come after our store: the exchange then finds us parking (our
// CAS to waiting fails) or waiting (it wakes the futex).
void worker::wait(wake_condition* also) {
  owner_.reclamation().abandon(index_);
  state_.store(parking, std::memory_order_seq_cst);
  const auto give_up = [this] { state_.store(running, std::memory_order_relaxed); };
  if (!register_as_waiter()) return give_up();
  for (const std::unique_ptr<held_queue>& h : held_)
    if (!h->queue->register_holder(this)) return give_up();
  const auto now = std::chrono::steady_clock::now();
  auto earliest = std::chrono::steady_clock::time_point::max();
  bool due = false;
  const auto look = [&](wake_condition& c) {
    earliest = std::min(earliest, c.deadline);
    due = c.poll(c, now >= c.deadline) != wake_condition::waiting || due;
  };
  if (also != nullptr) look(*also);
  for (suspended_behaviour* s : suspended_) look(*s->condition);
  if (due) return give_up();
  std::uint32_t expected = parking;
  if (!state_.compare_exchange_strong(expected, waiting, std::memory_order_seq_cst)) return;
  if (earliest == std::chrono::steady_clock::time_point::max())
    futex_wait(state_, waiting);
  else
    futex_wait_for(state_, waiting, earliest - now);
  expected = waiting;
  state_.compare_exchange_strong(expected, running, std::memory_order_seq_cst);
}

// A guest's fibers run this while the lender's own context is suspended in
// a behaviour: the lender goes on helping; once its context waits at loop
// level again the loop goes back to it (as for workers, see loop()).
void worker::guest_loop() {
  for (;;) {
    if (fibers_.ending()) return;
    if (fibers_.native_idle()) {
      fibers_.resume(fibers_.native());
      continue;
    }
    if (!help()) wait();
  }
}

}  // namespace tact::detail
