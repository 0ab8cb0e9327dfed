#include "executor/pool_worker.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <tact/defaults.hpp>

#include "executor/executor.hpp"
#include "executor/idle_spin.hpp"
#include "support/cpu_relax.hpp"

namespace tact::detail {

pool_worker::pool_worker(executor& owner, std::uint32_t index, block owned,
                         std::vector<std::vector<std::uint32_t>> victim_groups)
    : runner{owner, index, owned, &pool_worker::fiber_loop},
      stealing_{owner.stealing()},
      thief_{owner, *this, std::move(victim_groups)} {
  take_claims();
  use_outbox(idle_, hunger_);
}

void pool_worker::run() {
  enter();
  loop();
  // Stopping: claims not run yet go back to their queues, where stop()
  // finds what is left.
  release_claims();
  // Stopping: nothing is suspended (a worker with suspended behaviours
  // never counts as parked, so stop() waits for them); end the fibers.
  leave();
}

void pool_worker::fiber_loop(runner& self) { static_cast<pool_worker&>(self).loop(); }

// The loop of every context of the worker (see fiber_pool): only the
// native context sees the executor stop.
void pool_worker::loop() {
  idle_spin spin{owner().config().idle_spins, owner().config().idle_yields};
  std::uint64_t idle_sweeps = 0;
  std::uint64_t steal_gap = defaults::steal_after;
  // When, in empty sweeps after work, the first attempt comes: steal_gap,
  // or 1 right after a steal that succeeded (see below).
  std::uint64_t first_try = steal_gap;
  std::uint64_t next_steal = first_try;
  // A new idle stretch (after work, a rest or a park) counts its empty
  // sweeps from zero and starts its steal schedule afresh.
  const auto stretch_restarts = [&] {
    idle_sweeps = 0;
    next_steal = first_try;
  };
  // An idle stretch ends in work: the spin also learns how long it lasted
  // (one that ends in a park tells it through spin.parked(), see
  // idle_spin; a rest, ordered by the governor, tells it nothing).
  const auto stretch_ends = [&] {
    if (idle_sweeps > 0) spin.caught(idle_sweeps);
    stretch_restarts();
  };
  for (;;) {
    if (on_fiber()) [[unlikely]] {
      if (!fiber_turn()) return;
    } else if (owner().stopping()) {
      return;
    }
    // Queues claimed by what ran last (see runner::post_claimed), a few at
    // a time: the sweep below gives every own queue its turn in between.
    bool worked = drain_claims(defaults::claims_drained) > 0;
    // Sends kept for lack of memory (see executor::has_postponed): queued
    // again first, ahead of what this sweep would run, after work or a
    // sleep (not at every idle spin: memory comes back on its own time).
    if (idle_sweeps == 0 && owner().has_postponed()) [[unlikely]]
      worked = owner().retry_postponed();
    // Stood down by the governor: rests once no behaviour of its own waits
    // (only it can run those), and meanwhile takes no new work (see
    // wait_stood_down). A conversation it runs, which always has
    // its next claim pending, goes to the worker covering it: the claims
    // go back to their queues, where that worker's sweep finds them.
    // Without that, a worker that carries a conversation would never
    // rest, and the count the governor weighs would not be the one that
    // runs.
    if (owner().resting(index())) [[unlikely]] {
      release_claims();
      if (busy())
        wait_stood_down();
      else
        rest();
      stretch_restarts();
      continue;
    }
    if (busy()) [[unlikely]] {
      // Back here once this context is needed again (or must end): from
      // the top, which checks for that.
      if (resume_ready()) {
        stretch_ends();
        continue;
      }
      worked = drain_all_held() > 0 || worked;
    }
    if (sweep() || worked || has_claims()) {
      set_idle(false);
      found_work();
      stretch_ends();
      if (stealing_) rescue_when_due();
      continue;
    }
    ++idle_sweeps;
    set_idle(true);
    if (idle_sweeps > defaults::hungry_after) become_hungry();
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
    //
    // After a steal that succeeded, though, the thief tries again at its
    // first empty sweep: the victim had work to spare, or was not running
    // (preempted), and then the mail that the stolen work sends back to
    // it is stranded too. A chain of actors crossing to a preempted worker
    // would otherwise wait out the gap at every crossing.
    //
    // A spin shorter than the gap (see idle_spin) ends before the attempt
    // is due: the worker then tries once before it parks, so that every
    // stretch that parks has looked at the others first.
    const bool spinning = spin.spins(idle_sweeps);
    const bool parking = !spinning && !spin.yields(idle_sweeps);
    if (stealing_ && (idle_sweeps == next_steal || (parking && next_steal > idle_sweeps))) {
      if (thief_.steal()) {
        steal_gap = defaults::steal_after;
        first_try = 1;
        next_steal = first_try;
        continue;
      }
      steal_gap = std::min<std::uint64_t>(2 * steal_gap, defaults::steal_gap_longest);
      first_try = steal_gap;
      next_steal = idle_sweeps + steal_gap;
    }
    if (spinning) {
      cpu_relax();
    } else if (!parking) {
      std::this_thread::yield();
    } else {
      if (busy())
        wait();
      else
        park();
      spin.parked();
      stretch_restarts();
    }
  }
}

// Busy, every sixteenth sweep, or after a sweep that ran 256 messages
// since the last look: a look at the clock, and once per quarter of
// defaults::rescue_after a look at the other workers (thief::rescue).
// Between sweeps, never inside one: a thief nulls its own slot for the
// moment of a swap, and a sweep must not see that (see try_swap). Each
// look reads one line per other worker, so the others' sends do not feel
// it; the clock costs about a nanosecond per sweep or per ten messages.
void pool_worker::rescue_when_due() {
  const std::uint64_t processed = counters.messages_processed.get();
  if ((sweeps_.get() & 15) != 0 && processed - processed_at_look_ < 256) return;
  processed_at_look_ = processed;
  const auto now = std::chrono::steady_clock::now();
  owner().adapt_when_due(now);
  if (now < next_rescue_) return;
  next_rescue_ = now + defaults::rescue_after / 4;
  thief_.rescue();
}

// A queue's pointer may be swapped away by a thief between our load and
// our gulp; both of us may then gulp it. being_processed, read and set
// under the queue's lock, lets only one process it at a time: the other
// finds it busy and moves on (a missed gulp), or gulps it after the first
// has finished, in order (Cforall thesis, the race after "Queue Pointer Swap").
// A hint, as idle() is: the count may lag a change by a moment.
void pool_worker::set_idle(bool idle) noexcept {
  if (idle_.load(std::memory_order_relaxed) == idle) return;
  idle_.store(idle, std::memory_order_relaxed);
  if (idle)
    owner().idle_workers().fetch_add(1, std::memory_order_relaxed);
  else
    owner().idle_workers().fetch_sub(1, std::memory_order_relaxed);
}

// The count goes down once per hungry spell, by whoever moves the state
// out of hungry_now: the sender whose compare-and-swap makes it fed, or
// the worker's exchange back to not_hungry, whichever comes first. It goes
// up before the state is set, so a sender that finds it raised may find
// no hungry worker yet (a scan for nothing), but it never wraps below
// zero. A hint either way, read relaxed.
void pool_worker::become_hungry() noexcept {
  if (hunger_.load(std::memory_order_relaxed) != not_hungry) return;
  owner().hungry_workers().fetch_add(1, std::memory_order_relaxed);
  hunger_.store(hungry_now, std::memory_order_relaxed);
}

void pool_worker::found_work() noexcept {
  if (hunger_.load(std::memory_order_relaxed) != not_hungry &&
      hunger_.exchange(not_hungry, std::memory_order_relaxed) == hungry_now)
    owner().hungry_workers().fetch_sub(1, std::memory_order_relaxed);
}

bool pool_worker::take_hunger() noexcept {
  std::uint8_t expected = hungry_now;
  if (!hunger_.compare_exchange_strong(expected, fed, std::memory_order_relaxed)) return false;
  owner().hungry_workers().fetch_sub(1, std::memory_order_relaxed);
  return true;
}

bool pool_worker::sweep() {
  sweeps_.add();
  bool worked = false;
  for (std::uint32_t slot = owned().first; slot < owned().last; ++slot)
    worked = sweep_one(owner().owned_queue(slot)) || worked;
  // The blocks of resting workers this one covers. A resting worker swaps
  // none of its slots, but one the governor has just stood down or woken
  // may, as a thief: a null slot is skipped (see try_swap); and both of us
  // may gulp one queue, which being_processed settles as above.
  const std::uint32_t active = owner().active_workers();
  if (active < owner().worker_count()) [[unlikely]]
    owner().for_each_covered(index(), active, [&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t slot = first; slot < last; ++slot)
        if (work_queue* q = owner().slot(slot).load(std::memory_order_relaxed))
          worked = sweep_one(*q) || worked;
    });
  return worked;
}

bool pool_worker::sweep_one(work_queue& q) {
  if (q.looks_empty()) return false;
  switch (q.gulp()) {
    case work_queue::gulp_result::taken:
      // Busy from here: a share handed to it now would wait for this
      // batch, which may be long (or, in a behaviour that waits for work
      // elsewhere, for that share itself); and a send to its queues from
      // another worker's batch is held like any other (see
      // runner::hold_send), not posted at once for an idle worker that
      // would run it.
      set_idle(false);
      found_work();
      process(q, owner().index_of(q));
      drain_claims(defaults::claims_drained);
      return true;
    case work_queue::gulp_result::busy:
      counters.missed_gulps.add();
      return false;
    case work_queue::gulp_result::empty:
      return false;
  }
  return false;
}

// Parks (see parker), registered on every queue in our slots and in the
// blocks we cover (see executor::register_covered). A thief that
// swaps a queue into our slots while we register wakes us (see
// thief::steal_from), so a queue we did not register for cannot strand its
// mail.
void pool_worker::park() {
  // A last look first: mail stranded on a worker whose thread is not
  // running (see thief::worth_stealing) is taken now, not after a watch.
  if (stealing_ && thief_.steal_stranded()) return;
  trim_fibers();
  // What this worker retired and cannot free yet goes to the shared list,
  // so that a parked worker does not hold it until it runs again.
  owner().reclamation().abandon(index());
  // Sends waiting for memory: retried after a short sleep, never parked on.
  if (owner().has_postponed()) [[unlikely]] {
    std::this_thread::sleep_for(defaults::memory_retry);
    return;
  }
  // stop() sets `stopping` and then wakes every worker, and
  // postponed_begins() sets `postponed` and then wakes one: either we see
  // the flag, or its wake() comes after our store of `parking`. So does
  // set_active() with the count that stands us down: we rest instead.
  const parker::state parked = stealing_ ? parker::watching : parker::sleeping;
  if (!parker_.park([this] { return register_as_waiter(); },
                    [this] {
                      return owner().stopping() || owner().has_postponed() ||
                             owner().resting(index(), std::memory_order_seq_cst);
                    },
                    parked))
    return;
  counters.parks.add();
  parked_dry();
  owner().quiet().parked();
  if (stealing_) {
    watch();
    // We run again. If no parked worker is left watching, make one.
    owner().keep_watch();
  } else {
    parker_.sleep(parker::sleeping);
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
void pool_worker::watch() {
  std::chrono::nanoseconds wait = defaults::watch_first;
  for (;;) {
    parker_.sleep_for(parker::watching, wait);
    if (!parker_.still(parker::watching)) return;  // woken
    if (const auto victim = thief_.find_stranded_work()) {
      // Uncounted before we leave `watching`, as parker::wake does, so that
      // the count never includes a running worker; a waker that got here
      // first has taken the count back itself.
      owner().quiet().unparked();
      if (!parker_.move(parker::watching, parker::running)) owner().quiet().parked();
      thief_.steal_from(*victim);
      return;
    }
    if (wait < defaults::watch_longest) {
      wait = std::min<std::chrono::nanoseconds>(2 * wait, defaults::watch_longest);
      continue;
    }
    // Sleep for good only if every worker is parked, checked after
    // announcing it: keep_watch() loads our state after a waker made the
    // count drop, so it either sees us sleeping, or we see the drop here.
    if (!parker_.move(parker::watching, parker::sleeping)) return;
    if (owner().quiet().all_parked()) {
      parker_.sleep(parker::sleeping);
      return;
    }
    if (!parker_.move(parker::sleeping, parker::watching)) return;
  }
}

// Stood down by the governor (see executor::adapt_when_due): parked as
// resting, not registered on its queues, which the worker covering them
// registers on; it runs again when the governor wakes it with a larger
// count, or the executor stops. Counted parked for quiescence: the system
// is quiescent once the workers that run are parked too, each registered
// on its own and its covered queues. It takes no work, so it does not
// count as idle for the others' outboxes (see runner::hold_send).
//
// In place of registering, it wakes the worker covering it, after its
// `parking` store and before it commits to rest. A thief that swapped a
// queue into one of our slots while we were running did not wake us, and
// the worker covering us may have registered on the queue that slot held
// before: woken, it registers again, on what the slot holds after the
// swap (which came before our store). Every later swap finds us parking
// or resting and wakes us: parking, our commit fails and we start again;
// resting, the wake is passed on (see wake()). Before the commit, and so
// before we count as parked: a system that counts every worker parked has
// no wake-up in flight (tests/model/parking_model.py checks this order).
void pool_worker::rest() {
  set_idle(false);
  found_work();  // resting, it takes no share
  trim_fibers();
  owner().reclamation().abandon(index());
  if (!parker_.park(
          [this] {
            owner().wake_covering(index());
            return true;
          },
          [this] {
            return owner().stopping() || !owner().resting(index(), std::memory_order_seq_cst);
          },
          parker::resting))
    return;
  counters.parks.add();
  counters.rests.add();
  owner().quiet().parked();
  // Now and then it ends the governor's epoch itself: the running workers
  // do so only between batches, and if they are all stuck (in behaviours
  // that block, or preempted by the OS on a busy machine) the epoch shows
  // few messages, and every worker runs again.
  while (parker_.still(parker::resting)) {
    parker_.sleep_for(parker::resting, defaults::rescue_after);
    if (parker_.still(parker::resting)) owner().adapt_when_due(std::chrono::steady_clock::now());
  }
  counters.wakeups.add();
}

// Stood down by the governor while behaviours of its own wait (an ask,
// a send to a full mailbox): only this worker can resume them, so it
// cannot rest yet, but it takes no new work either. It runs those
// behaviours as they become ready, and what their held queues have for
// the actors of those queues (nobody else may run them meanwhile), and
// sleeps between; no sweep, no claim, no steal: its own queues are the
// covering worker's to sweep (see runner::wait). Once nothing of it
// waits, it rests. It used to go on sweeping its queues while it could
// not rest: a client muted by a full mailbox, as tx_counter's are, waits
// again at its next send, so the worker kept running the clients, and
// every epoch the governor weighed at one worker ran at two.
void pool_worker::wait_stood_down() {
  set_idle(false);
  found_work();  // stood down, it takes no share
  if (resume_ready() || drain_all_held() != 0) return;
  wait(nullptr, false);
}

void pool_worker::wake() noexcept {
  quiescence& quiet = owner().quiet();
  if (parker_.wake([&] { quiet.unparked(); }, [&] { quiet.parked(); }) == parker::resting)
    owner().wake_covering(index());
}

}  // namespace tact::detail
