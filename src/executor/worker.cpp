#include "executor/worker.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <tact/defaults.hpp>

#include "executor/executor.hpp"
#include "executor/queue_swap.hpp"
#include "support/cpu_relax.hpp"
#include "support/futex.hpp"

namespace tact::detail {

constinit thread_local worker* this_thread_worker = nullptr;

worker::worker(executor& owner, std::uint32_t index, std::uint32_t first_slot,
               std::uint32_t last_slot,
               std::vector<std::vector<std::uint32_t>> victim_groups)
    : owner_{owner},
      index_{index},
      first_slot_{first_slot},
      last_slot_{last_slot},
      local_batch_{owner.config().local_batch},
      stealing_{owner.stealing()},
      suspends_{index < 2 * owner.worker_count()},
      ticket_{first_slot},
      victims_{owner.config().steal, index, owner.worker_count(), std::move(victim_groups)},
      progress_(owner.worker_count()),
      fibers_{owner.config().fiber_stack_size, &worker::loop_on_fiber, this} {}

void worker::run() {
  this_thread_worker = this;
  fibers_.enter();
  loop();
  // Stopping: nothing is suspended (a worker with suspended behaviours
  // never counts as parked, so stop() waits for them); end the fibers.
  fibers_.leave();
  this_thread_worker = nullptr;
}

bool worker::pooled() const noexcept { return index_ < owner_.worker_count(); }

void worker::loop_on_fiber(void* self) {
  worker& w = *static_cast<worker*>(self);
  if (w.pooled())
    w.loop();
  else
    w.guest_loop();
}

// The loop of every context of a pool worker (see fiber_pool).
void worker::loop() {
  const std::uint64_t spins = owner_.config().idle_spins;
  const std::uint64_t park_after = spins + owner_.config().idle_yields;
  std::uint64_t idle_sweeps = 0;
  std::uint64_t steal_gap = defaults::steal_after;
  std::uint64_t next_steal = steal_gap;
  for (;;) {
    if (!fibers_.on_native()) [[unlikely]] {
      if (fibers_.ending()) return;
      // A fiber runs the loop only while the native context is suspended
      // in a behaviour; once that one waits at loop level (it resumed a
      // behaviour on this fiber), the loop goes back to it. So behaviours
      // mostly run on the thread's own, larger stack, and only the native
      // context sees the executor stop.
      if (fibers_.native_idle()) {
        fibers_.resume(fibers_.native());
        continue;
      }
    } else if (owner_.stopping()) {
      return;
    }
    bool worked = false;
    if (busy()) [[unlikely]] {
      // Back here once this context is needed again (or must end): from
      // the top, which checks for that.
      if (resume_ready()) {
        idle_sweeps = 0;
        next_steal = steal_gap;
        continue;
      }
      worked = drain_all_held() > 0;
    }
    if (sweep() || worked) {
      idle_sweeps = 0;
      next_steal = steal_gap;
      continue;
    }
    ++idle_sweeps;
    // The Cforall thesis: after consecutive empty sweeps a worker turns thief once;
    // whatever comes of it, it sweeps its own queues again (which now hold
    // the stolen one) before it steals again. The thesis steals after every
    // two empty sweeps; but looking at a victim's queues is not free for
    // it (its senders find those lines shared with us, one miss per send),
    // so a thief first waits out short lulls, and then doubles the gap
    // after each failed attempt (see defaults::steal_after). The gap
    // outlasts the thief's own work, and only a steal shortens it again: a
    // worker fed in short bursts (a chain of actors crossing between two
    // workers) would otherwise try at every lull, and each try costs the
    // victim misses while it runs that same chain.
    if (stealing_ && idle_sweeps == next_steal) {
      if (steal()) {
        steal_gap = defaults::steal_after;
        next_steal = steal_gap;
        continue;
      }
      steal_gap = std::min<std::uint64_t>(2 * steal_gap, defaults::steal_gap_longest);
      next_steal = idle_sweeps + steal_gap;
    }
    if (idle_sweeps <= spins) {
      cpu_relax();
    } else if (idle_sweeps <= park_after) {
      std::this_thread::yield();
    } else {
      if (busy())
        wait();
      else
        park();
      idle_sweeps = 0;
      next_steal = steal_gap;
    }
  }
}

// Leaves the epochs (pinned lazily by a transactional dispatch) at a point
// where this worker holds nothing read under the pin: after a batch, and
// when a behaviour suspends (a transactional dispatch drops its behaviour
// before returning, so a suspended behaviour never keeps the worker
// pinned).
void worker::unpin() noexcept {
  if (owner_.reclamation().pinned(index_)) owner_.reclamation().unpin(index_);
}

// A queue's pointer may be swapped away by a thief between our load and
// our gulp; both of us may then gulp it. being_processed, read and set
// under the queue's lock, lets only one process it at a time: the other
// finds it busy and moves on (a missed gulp), or gulps it after the first
// has finished, in order (Cforall thesis, the race after "Queue Pointer Swap").
bool worker::sweep() {
  bool worked = false;
  for (std::uint32_t slot = first_slot_; slot < last_slot_; ++slot) {
    work_queue& q = owner_.owned_queue(slot);
    if (q.looks_empty()) continue;
    switch (q.gulp()) {
      case work_queue::gulp_result::taken:
        process(q);
        worked = true;
        break;
      case work_queue::gulp_result::busy:
        counters.missed_gulps.add();
        break;
      case work_queue::gulp_result::empty:
        break;
    }
  }
  return worked;
}

std::uint64_t worker::process(work_queue& q) {
  copy_queue& batch = q.batch();
  counters.gulps.add();
  counters.gulped_messages.add(batch.size());
  current_ = &q;
  current_index_ = owner_.index_of(q);
  budget_ = local_batch_;
  std::uint64_t processed = 0;
  // The envelope's words are read out before it runs (the behaviour may
  // append to this batch, which may move the array), one scalar load each:
  // a sender just wrote them with three 8-byte stores, and a wider load
  // spanning two of them could not be store-forwarded (a stall per message
  // when a behaviour feeds its own batch).
  while (!batch.empty()) {
    const envelope& next = batch.front();
    const run_fn run = next.run;
    void* const target = next.target;
    void* const message = next.message;
    batch.drop_front();
    running_target_ = target;
    run(target, message);
    ++processed;
  }
  // A behaviour waited (see suspend()): the rest of the batch went to the
  // held queue, leaving this one empty, and other contexts have been
  // running it since. Checked once per batch, not per message.
  if (resumed_) [[unlikely]] {
    counters.messages_processed.add(processed);
    return processed + after_resume(q, owner_.index_of(q), running_target_);
  }
  current_ = nullptr;
  current_index_ = no_queue;
  // Unpinned only once the batch holds no pointer it read under the pin.
  unpin();
  const std::uint32_t appended = local_batch_ - budget_;
  counters.local_sends.add(appended);
  counters.messages_sent.add(appended);
  counters.messages_processed.add(processed);
  q.finish();
  return processed;
}

std::uint64_t worker::drain(work_queue& q) {
  std::uint64_t ran = 0;
  for (;;) {
    switch (q.gulp()) {
      case work_queue::gulp_result::taken:
        ran += process(q);
        break;
      case work_queue::gulp_result::empty:
        // Under the queue's lock: a send either came before (we go round
        // again) or comes after and finds us registered.
        if (q.register_waiter(this, nullptr)) return ran;
        break;
      case work_queue::gulp_result::busy:
        // Another thread is running this sponsor (the program called it
        // from two threads): that one finishes the work.
        return ran;
    }
  }
}

bool worker::steal() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  last_steal_attempt_.store(now, std::memory_order_relaxed);
  const std::uint32_t victim = victims_.pick([this](std::uint32_t w) {
    return owner_.worker_at(w).last_steal_attempt_.load(std::memory_order_relaxed);
  });
  return steal_from(victim);
}

// One steal attempt (Cforall thesis, "Stealing Mechanism"): find a queue worth
// taking from the victim and try once to swap it with one of ours. A
// failed swap means someone else took it, or took ours: give up either way.
bool worker::steal_from(std::uint32_t victim_index) {
  counters.steal_attempts.add();
  worker& victim = owner_.worker_at(victim_index);
  const std::optional<std::uint32_t> slot = worth_stealing(victim);
  if (!slot) {
    counters.steal_no_candidate.add();
    return false;
  }
  atomic<work_queue*>& theirs = owner_.slot(*slot);
  work_queue* const q = theirs.load(std::memory_order_relaxed);
  const std::uint32_t queued = q != nullptr ? q->queued() : 0;
  if (q == nullptr || !try_swap(owner_.slot(slot_to_give()), theirs, q)) {
    counters.steal_failed_swaps.add();
    return false;
  }
  counters.steals.add();
  counters.messages_stolen.add(queued);
  victims_.stole();
  // The queue we gave is the victim's now. If the victim is parking or
  // parked it may have registered as waiter on its old queues only: wake
  // it to sweep (and re-register). Sequentially consistent with the
  // victim's own `parking` store and slot loads in park(): either we see
  // it parking here, or its loads come after our swap and see our queue.
  if (victim.state_.load(std::memory_order_seq_cst) != running) victim.wake();
  return true;
}

// The victim's slot to steal, if any: scanning once from a random start,
// the first queue with mail that nobody processes, skipping slots that are
// mid-swap (null). Mail is looked at first, because being_processed shares
// a line with the batch a worker is draining: we read it only for queues
// that have mail, or when the victim has no other mail and is stuck.
//
// Beyond the thesis, the queue is worth taking only if the victim could not
// run it soon itself, else stealing moves work instead of sharing it (a
// lone busy queue, or a chain of actors each creating the next, would
// bounce between workers): the victim must have another queue with mail
// (a backlog to share), or be stuck in another queue's batch (no gulp
// for a while: a long receive).
std::optional<std::uint32_t> worker::worth_stealing(const worker& victim) noexcept {
  const std::uint32_t first = victim.first_slot_;
  const std::uint32_t span = victim.last_slot_ - first;
  const std::uint32_t start = victims_.random(span);
  std::optional<std::uint32_t> found;
  for (std::uint32_t i = 0, at = start; i < span; ++i, at = at + 1 == span ? 0 : at + 1) {
    const work_queue* q = owner_.slot(first + at).load(std::memory_order_relaxed);
    if (q != nullptr && !q->looks_empty() && !q->being_processed()) {
      found = first + at;
      break;
    }
  }
  if (!found) return std::nullopt;
  for (std::uint32_t slot = first; slot < first + span; ++slot) {
    if (slot == *found) continue;
    const work_queue* q = owner_.slot(slot).load(std::memory_order_relaxed);
    if (q != nullptr && !q->looks_empty()) return found;
  }
  // No backlog. Whether the victim is stuck is asked before whether it is
  // in a batch at all: each being_processed read costs a victim that is
  // not stuck a miss on the line of the batch it drains (a ring of actors
  // crossing between two workers ran at half speed while idle thieves
  // kept reading them).
  if (!stuck(victim)) return std::nullopt;
  for (std::uint32_t slot = first; slot < first + span; ++slot) {
    if (slot == *found) continue;
    const work_queue* q = owner_.slot(slot).load(std::memory_order_relaxed);
    if (q != nullptr && q->being_processed()) return found;
  }
  return std::nullopt;
}

// Whether the victim has not started a gulp for defaults::stuck_worker,
// as far as this thief has watched it. Reads its gulp counter, written
// once per gulp, never per message, and only once the last progress this
// thief saw is that old: before then the victim cannot be stuck, and the
// read would cost it a miss on its next gulp. So a stuck victim is seen
// between one and two stuck_worker periods after its last gulp.
bool worker::stuck(const worker& victim) noexcept {
  const auto now = std::chrono::steady_clock::now();
  victim_progress& seen = progress_[victim.index_];
  if (now - seen.since < defaults::stuck_worker) return false;
  const std::uint64_t gulps = victim.counters.gulps.get();
  if (seen.gulps != gulps) {
    seen = {gulps, now};
    return false;
  }
  return true;
}

// The own slot to offer in a swap: preferably one whose queue is idle, so
// that the victim gets no work in exchange.
std::uint32_t worker::slot_to_give() noexcept {
  const std::uint32_t span = last_slot_ - first_slot_;
  for (std::uint32_t i = 0; i < span; ++i) {
    const std::uint32_t slot = first_slot_ + give_;
    give_ = give_ + 1 == span ? 0 : give_ + 1;
    const work_queue& q = owner_.owned_queue(slot);
    if (q.looks_empty() && !q.being_processed()) return slot;
  }
  return first_slot_ + give_;
}

// A worker, other than this one, with a queue worth stealing, if any.
std::optional<std::uint32_t> worker::find_stranded_work() noexcept {
  const std::uint32_t workers = owner_.worker_count();
  std::uint32_t w = victims_.random(workers);
  for (std::uint32_t i = 0; i < workers; ++i, w = w + 1 == workers ? 0 : w + 1)
    if (w != index_ && worth_stealing(owner_.worker_at(w))) return w;
  return std::nullopt;
}

// A pass stays open (the guest counts as busy for quiescence) for as long
// as behaviours it ran are suspended: the system is not quiescent while
// they wait.
bool worker::help() {
  if (!open_pass_) {
    owner_.on_guest_busy();
    open_pass_ = true;
  }
  bool worked = false;
  if (busy()) [[unlikely]] {
    // A resumed behaviour is this pass's work; the context that ran it
    // comes back here when it is needed again (or must end).
    worked = resume_ready() || drain_all_held() > 0;
  }
  // Start where the last pass stopped, so guests spread over the queues.
  const std::uint32_t queues = owner_.queue_count();
  for (std::uint32_t i = 0; i < queues && !worked; ++i) {
    work_queue& q = owner_.queue_at(spread_);
    spread_ = spread_ + 1 == queues ? 0 : spread_ + 1;
    if (!q.looks_empty() && q.gulp() == work_queue::gulp_result::taken) {
      process(q);
      worked = true;
    }
  }
  if (open_pass_ && !busy()) {
    open_pass_ = false;
    owner_.on_guest_idle();
  }
  return worked;
}

void worker::step(work_queue& q) {
  // What a nested step interrupts: the step of another queue, whose
  // behaviour is waiting (see stepper).
  worker* const outer_worker = std::exchange(this_thread_worker, this);
  work_queue* const outer = std::exchange(current_, &q);
  const std::uint32_t outer_index = std::exchange(current_index_, owner_.index_of(q));
  const std::uint32_t outer_budget = std::exchange(budget_, local_batch_);
  void* const outer_target = running_target_;
  copy_queue& batch = q.batch();
  const envelope next = batch.front();
  batch.drop_front();
  running_target_ = next.target;
  next.run(next.target, next.message);
  const std::uint32_t appended = local_batch_ - budget_;
  counters.local_sends.add(appended);
  counters.messages_sent.add(appended);
  counters.messages_processed.add();
  current_ = outer;
  current_index_ = outer_index;
  budget_ = outer_budget;
  running_target_ = outer_target;
  this_thread_worker = outer_worker;
  if (!batch.empty()) return;
  // Unpinned only by the outermost step: an interrupted one may still
  // hold what it read under the pin.
  if (outer == nullptr) unpin();
  q.finish();
}

std::uint32_t worker::next_own_queue() noexcept {
  const std::uint32_t span = last_slot_ - first_slot_;
  if (span == 0) return owner_.next_queue();  // a guest owns none
  const std::uint32_t slot = first_slot_ + spread_;
  spread_ = spread_ + 1 == span ? 0 : spread_ + 1;
  return owner_.index_of(owner_.owned_queue(slot));
}

std::uint32_t worker::next_ticket() noexcept {
  const std::uint32_t ticket = ticket_;
  ticket_ = ticket + 1 == owner_.queue_count() ? 0 : ticket + 1;
  return ticket;
}

// Step 2 of parking (see park): registers as the waiter of every queue in
// our slots; false if one has mail, or was taken from us by a thief since
// we loaded the slot (who then wakes us: we are parking).
bool worker::register_as_waiter() noexcept {
  for (std::uint32_t slot = first_slot_; slot < last_slot_; ++slot) {
    const atomic<work_queue*>& mine = owner_.slot(slot);
    if (!mine.load(std::memory_order_seq_cst)->register_waiter(this, &mine)) return false;
  }
  return true;
}

// Parking protocol (no lost wake-up):
//  1. state := parking.
//  2. Register as the waiter of every owned queue, each under that queue's
//     lock, giving up if one has mail or has been stolen meanwhile (see
//     work_queue::register_waiter). A post to a queue either precedes
//     its registration (we see the mail and give up) or follows it (the
//     poster takes us as the queue's waiter and calls wake()).
//  3. parking -> watching/sleeping by CAS. wake() swaps in `running`; if it
//     got there first the CAS fails and we sweep again, otherwise wake()
//     sees us parked and notifies the futex we sleep on.
// A registration left behind by a give-up only causes one spurious wake().
// A thief that swaps a queue into our slots during step 2 wakes us (see
// steal_from), so a queue we did not register for cannot strand its mail.
void worker::park() {
  // What this worker retired and cannot free yet goes to the shared list,
  // so that a parked worker does not hold it until it runs again.
  owner_.reclamation().abandon(index_);
  state_.store(parking, std::memory_order_seq_cst);
  if (!register_as_waiter()) {
    state_.store(running, std::memory_order_relaxed);
    return;
  }
  // stop() sets `stopping` and then wakes every worker: either we see the
  // flag here, or its wake() comes after our store of `parking`.
  if (owner_.stopping()) {
    state_.store(running, std::memory_order_relaxed);
    return;
  }
  std::uint32_t expected = parking;
  const std::uint32_t parked = stealing_ ? watching : sleeping;
  if (!state_.compare_exchange_strong(expected, parked, std::memory_order_seq_cst)) return;
  counters.parks.add();
  owner_.on_parked();
  if (stealing_) {
    watch();
    // We run again. If no parked worker is left watching, make one.
    owner_.keep_watch();
  } else {
    sleep();
  }
  counters.wakeups.add();
}

// Parked with stealing on. Posts wake a queue's owner only when the owner
// is parked; a busy owner (say, blocked in a long receive) leaves mail in
// its other queues for thieves, and parked thieves must not all miss it.
// So a parked worker looks now and then, waiting longer each time it finds
// nothing. Once it waits the longest and every worker is parked, nothing
// can be stranded (each queue's owner is registered on it) and it sleeps
// until woken; whoever leaves parking next calls executor::keep_watch(),
// which wakes a sleeper whenever no parked worker is left watching.
void worker::watch() {
  std::chrono::nanoseconds wait = defaults::watch_first;
  for (;;) {
    futex_wait_for(state_, watching, wait);
    if (state_.load(std::memory_order_acquire) != watching) return;  // woken
    if (const auto victim = find_stranded_work()) {
      std::uint32_t expected = watching;
      if (state_.compare_exchange_strong(expected, running, std::memory_order_seq_cst))
        owner_.on_unparked();
      steal_from(*victim);
      return;
    }
    if (wait < defaults::watch_longest) {
      wait = std::min<std::chrono::nanoseconds>(2 * wait, defaults::watch_longest);
      continue;
    }
    // Sleep for good only if every worker is parked, checked after
    // announcing it: keep_watch() loads our state after a waker made the
    // count drop, so it either sees us sleeping, or we see the drop here.
    std::uint32_t expected = watching;
    if (!state_.compare_exchange_strong(expected, sleeping, std::memory_order_seq_cst)) return;
    if (owner_.all_parked()) {
      sleep();
      return;
    }
    expected = sleeping;
    if (!state_.compare_exchange_strong(expected, watching, std::memory_order_seq_cst)) return;
  }
}

void worker::sleep() noexcept {
  while (state_.load(std::memory_order_acquire) == sleeping) futex_wait(state_, sleeping);
}

void worker::wake() noexcept {
  if (notify_ != nullptr) return notify_(notify_context_);
  // An unconditional exchange: it reads the latest state, so it cannot miss
  // a park that is committing concurrently.
  const std::uint32_t previous = state_.exchange(running, std::memory_order_seq_cst);
  if (previous == watching || previous == sleeping) {
    owner_.on_unparked();
    futex_wake_one(state_);
  } else if (previous == waiting) {
    futex_wake_one(state_);  // never counted as parked
  }
}

}  // namespace tact::detail
