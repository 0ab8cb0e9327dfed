#include "executor/stealing.hpp"

#include <utility>

#include <tact/defaults.hpp>

#include "executor/executor.hpp"
#include "executor/pool_worker.hpp"
#include "executor/queue_swap.hpp"

namespace tact::detail {

thief::thief(executor& owner, pool_worker& self,
             std::vector<std::vector<std::uint32_t>> victim_groups)
    : owner_{owner},
      self_{self},
      victims_{owner.config().steal, self.index(), owner.worker_count(), std::move(victim_groups)},
      progress_(owner.worker_count()) {}

bool thief::steal() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  last_attempt_.store(now, std::memory_order_relaxed);
  const std::uint32_t victim = victims_.pick(
      [this](std::uint32_t w) { return owner_.worker_at(w).stealing().last_attempt(); });
  return steal_from(victim);
}

// One steal attempt: find a queue worth taking from the victim and try once
// to swap it with one of ours. A failed swap means someone else took it,
// or took ours: give up either way.
bool thief::steal_from(std::uint32_t victim_index) {
  worker_counters& counters = self_.counters;
  counters.steal_attempts.add();
  pool_worker& victim = owner_.worker_at(victim_index);
  const std::optional<std::uint32_t> slot = worth_stealing(victim);
  if (!slot) {
    counters.steal_no_candidate.add();
    return false;
  }
  return take(victim, *slot, slot_to_give());
}

// The swap of the victim's slot `theirs` with our slot `ours`, counted.
// Fails if either slot changed since it was read (another thief, or the
// victim's own swap): the queue is someone else's to take then.
bool thief::take(pool_worker& victim, std::uint32_t theirs, std::uint32_t ours) {
  worker_counters& counters = self_.counters;
  atomic<work_queue*>& their_slot = owner_.slot(theirs);
  work_queue* const q = their_slot.load(std::memory_order_relaxed);
  const std::uint32_t queued = q != nullptr ? q->queued() : 0;
  const work_queue& given = owner_.owned_queue(ours);  // only we null our slot
  if (q == nullptr || !try_swap(owner_.slot(ours), their_slot, q)) {
    counters.steal_failed_swaps.add();
    return false;
  }
  owner_.moved(*q, ours);
  owner_.moved(given, theirs);
  counters.steals.add();
  counters.messages_stolen.add(queued);
  victims_.stole();
  // The queue we gave is the victim's now. If the victim is parking or
  // parked it may have registered as waiter on its old queues only: wake
  // it to sweep (and re-register). Sequentially consistent with the
  // victim's own `parking` store and slot loads in parker::park: either we
  // see it parking here, or its loads come after our swap and see our
  // queue.
  if (victim.parked_state() != parker::running) victim.wake();
  return true;
}

// The victim's slot to steal, if any: scanning once from a random start,
// the first queue with mail that nobody processes, skipping slots that are
// mid-swap (null). Mail is looked at first, because being_processed shares
// a line with the batch a worker is draining: we read it only for queues
// that have mail.
//
// Beyond the thesis, the queue is worth taking only if the victim could not
// run it soon itself, else stealing moves work instead of sharing it (a
// lone busy queue, or a chain of actors each creating the next, would
// bounce between workers): the victim must have another queue with mail
// (a backlog to share), or be stuck: no gulp for a while. A stuck victim
// is either in a long receive, or its thread is not running at all (the
// OS preempted it, on a machine busy with other work), and then its mail
// would wait for the OS scheduler while we idle: a preempted thread is
// not a busy worker.
std::optional<std::uint32_t> thief::worth_stealing(const pool_worker& victim) noexcept {
  const std::uint32_t first = victim.owned().first;
  const std::uint32_t span = victim.owned().last - first;
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
  if (stuck(victim, defaults::stuck_worker)) return found;
  return std::nullopt;
}

// Beyond the thesis: a worker with work of its own does not steal (its
// sweep would only run the stolen queue after its own), except from a
// worker that has been still for much longer than any turn of a queue
// takes (the gulp budget): its thread is not running, preempted on a
// machine busy with other work, or it is in a receive that long. Its
// queues with mail would otherwise wait for the OS scheduler, or for that
// receive, while this worker runs. A parked victim is left alone: a send
// to its queues wakes it.
//
// Safe as every steal is: the swap moves only queue pointers, never mail,
// and a queue the victim is processing (being_processed) is neither taken
// nor, if taken anyway after a stale read, run twice at once (see
// pool_worker::sweep). The victim's fast path reads its own slots only.
//
// The blocks a stuck worker covers for resting workers (see
// executor::for_each_covered) wait for it as much as its own: they are
// looked at too. The count may have changed since we read it: the block's
// own worker may be running again and parking, or another worker cover
// it, registered on what the slot held before our swap. So the block's
// worker is woken as take() wakes the victim, unless it runs: a wake that
// finds it resting goes on to whoever covers it now (pool_worker::wake),
// who registers again. Sequentially consistent as there: a worker we see
// running parks, if at all, after our swap and sees our queue. A covered
// slot may be null while the worker that rests swaps in its last moments
// as a thief: skipped.
std::uint32_t thief::rescue() {
  std::uint32_t taken = 0;
  bool nothing_to_give = false;
  const std::uint32_t workers = owner_.worker_count();
  const std::uint32_t active = owner_.active_workers();
  for (std::uint32_t w = 0; w < workers && !nothing_to_give; ++w) {
    if (w == self_.index()) continue;
    pool_worker& victim = owner_.worker_at(w);
    if (victim.parked_state() != parker::running || !stuck(victim, defaults::rescue_after))
      continue;
    const auto rescue_block = [&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t slot = first; slot < last && !nothing_to_give; ++slot) {
        const work_queue* q = owner_.slot(slot).load(std::memory_order_relaxed);
        if (q == nullptr || q->looks_empty() || q->being_processed()) continue;
        // What we give must not be work: it would be stranded in turn.
        const std::optional<std::uint32_t> ours = idle_slot_to_give();
        if (!ours) {
          nothing_to_give = true;
          return;
        }
        self_.counters.steal_attempts.add();
        if (!take(victim, slot, *ours)) continue;
        ++taken;
        self_.counters.rescues.add();
        pool_worker& home = owner_.worker_at(owner_.home_worker(slot));
        if (&home != &victim && home.parked_state() != parker::running) home.wake();
      }
    };
    rescue_block(victim.owned().first, victim.owned().last);
    owner_.for_each_covered(w, active, rescue_block);
  }
  return taken;
}

// Whether the victim has not started a sweep for `still`, as far as this
// thief has watched it. Reads its sweep count (a line it writes once per
// sweep, never per message) only once the last progress this thief saw is
// that old: before then the victim cannot be stuck, and the read would
// cost it a miss. So a stuck victim is seen between one and two `still`
// periods after its last sweep (or later, if this thief looks less often).
// A running worker with nothing to do sweeps every few nanoseconds; one
// still for that long is in a long batch, or its thread is not running.
bool thief::stuck(const pool_worker& victim, std::chrono::nanoseconds still) noexcept {
  const auto now = std::chrono::steady_clock::now();
  victim_progress& seen = progress_[victim.index()];
  if (now - seen.since < still) return false;
  const std::uint64_t sweeps = victim.sweeps();
  if (seen.sweeps != sweeps) {
    seen = {sweeps, now};
    return false;
  }
  return true;
}

// The own slot to offer in a swap: preferably one whose queue is idle, so
// that the victim gets no work in exchange.
std::uint32_t thief::slot_to_give() noexcept {
  return idle_slot_to_give().value_or(self_.owned().first + give_);
}

// An own slot whose queue is idle, if any, from where slot_to_give left off.
std::optional<std::uint32_t> thief::idle_slot_to_give() noexcept {
  const runner::block mine = self_.owned();
  const std::uint32_t span = mine.last - mine.first;
  for (std::uint32_t i = 0; i < span; ++i) {
    const std::uint32_t slot = mine.first + give_;
    give_ = give_ + 1 == span ? 0 : give_ + 1;
    const work_queue& q = owner_.owned_queue(slot);
    if (q.looks_empty() && !q.being_processed()) return slot;
  }
  return std::nullopt;
}

// Each other worker once, from a random one, until `take(w)` is true.
template <class Take>
std::optional<std::uint32_t> thief::first_other(Take&& take) {
  const std::uint32_t workers = owner_.worker_count();
  std::uint32_t w = victims_.random(workers);
  for (std::uint32_t i = 0; i < workers; ++i, w = w + 1 == workers ? 0 : w + 1)
    if (w != self_.index() && take(w)) return w;
  return std::nullopt;
}

bool thief::steal_stranded() {
  return first_other([this](std::uint32_t w) { return steal_from(w); }).has_value();
}

std::optional<std::uint32_t> thief::find_stranded_work() noexcept {
  return first_other(
      [this](std::uint32_t w) { return worth_stealing(owner_.worker_at(w)).has_value(); });
}

}  // namespace tact::detail
