#include "executor/runner.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <new>
#include <optional>
#include <utility>

#include <tact/defaults.hpp>

#include "executor/executor.hpp"
#include "executor/seam.hpp"
#include "executor/suspension.hpp"

namespace tact::detail {

constinit thread_local runner* this_thread_runner = nullptr;

runner::runner(executor& owner, std::uint32_t index, block owned, fiber_loop loop)
    : owner_{owner},
      epochs_{owner.reclamation()},
      index_{index},
      local_batch_{owner.config().local_batch},
      gulp_budget_{owner.config().gulp_budget},
      owned_{owned},
      kept_at_{std::make_unique<std::uint32_t[]>(owner.queue_count() + owner.config().sponsors)},
      held_along_{std::make_unique<std::uint8_t[]>(owner.queue_count() + owner.config().sponsors)},
      queues_{static_cast<const padded<work_queue>*>(&owner.queue_at(0))},
      kept_{std::make_unique<kept_queue[]>(owner.queue_count())},
      loop_{loop},
      suspensions_{loop != nullptr
                       ? std::make_unique<suspensions>(owner.config().fiber_stack_size, *this)
                       : nullptr} {}

runner::~runner() = default;

void runner::use_outbox(const std::atomic<bool>& idle, const std::atomic<std::uint8_t>& hunger) {
  TACT_ASSERT(claims_on_, "the outbox's marks (posted_in_) tell batches apart by their claim serials");
  outbox_ = std::make_unique<outbox>(owner_.queue_count() + owner_.config().sponsors);
  posted_in_ = std::make_unique<std::uint32_t[]>(owner_.queue_count() + owner_.config().sponsors);
  idle_workers_ = &owner_.idle_workers();
  own_idle_ = &idle;
  hungry_workers_ = &owner_.hungry_workers();
  own_hunger_ = &hunger;
}

// Each queue's share goes in one lock section.
void runner::post_outbox_now() noexcept {
  sends_held_ = false;
  outbox_->drain([this](std::uint32_t queue, const envelope* e, std::uint32_t n,
                        copy_queue::backup& backup) { owner_.post_held(*this, queue, e, n, backup); });
}

void runner::make_outbox_ready() {
  if (outbox_->full()) post_outbox_now();
  if (!outbox_->ready()) outbox_->add_backup();
}

void runner::enter() noexcept {
  TACT_ASSERT(this_thread_runner == nullptr, "a thread runs as one runner at a time");
  this_thread_runner = this;
  if (suspensions_) suspensions_->fibers.enter();
}

void runner::leave() noexcept {
  TACT_ASSERT(this_thread_runner == this && !busy(), "a runner leaves its thread when idle");
  // Its fibers end on the thread that made them.
  if (suspensions_) suspensions_->fibers.leave();
  // What it retired and cannot free yet must not wait for its next thread.
  epochs_.abandon(index_);
  this_thread_runner = nullptr;
}

void runner::wake() noexcept {
  // Only the runner's own wait() parks it, as `waiting`, which is never
  // counted as parked.
  parker_.wake();
}

void runner::loop_of(void* self) {
  runner& r = *static_cast<runner*>(self);
  r.loop_(r);
}

bool runner::on_fiber() const noexcept {
  return suspensions_ != nullptr && !suspensions_->fibers.on_native();
}

void runner::trim_fibers() noexcept {
  if (suspensions_ != nullptr && !busy() && !on_fiber()) suspensions_->fibers.trim();
}

bool runner::fiber_turn() noexcept {
  if (!on_fiber()) return true;
  fiber_pool& fibers = suspensions_->fibers;
  for (;;) {
    if (fibers.ending()) return false;
    // A fiber runs the loop only while the native context is suspended in
    // a behaviour; once that one waits at loop level (it resumed a
    // behaviour on this fiber), the loop goes back to it.
    if (!fibers.native_idle()) return true;
    fibers.resume(fibers.native());
  }
}

// Its own queues, and those of the resting workers it covers (a pool
// worker's; other runners cover none).
bool runner::register_as_waiter() noexcept {
  for (std::uint32_t slot = owned_.first; slot < owned_.last; ++slot)
    if (!register_through(owner_.slot(slot), this)) return false;
  return owner_.register_covered(index_, this);
}

void runner::count_appended() noexcept {
  const std::uint32_t appended = budget_start_ - budget_ + std::exchange(merged_, 0);
  counters.local_sends.add(appended);
  counters.messages_sent.add(appended);
}

// The clock starts after a batch's second unit of work (a batch of one or
// two messages, most of them in a conversation, never reads it: the
// reading would cost as much as the messages). Each reading estimates the
// time a unit of work (a message run, or sends_per_unit sends posted: see
// run_batch) takes so far and skips half the units that would fit in
// what is left, at most gulp_clock_every: cheap messages read the clock
// once per 64, and costly ones often enough that a turn overshoots its
// budget by about one message.
bool runner::read_gulp_clock(std::uint64_t work, gulp_clock& c) noexcept {
  const auto now = std::chrono::steady_clock::now();
  if (c.started == 0) {
    c.start = now;
    c.started = work;
    c.next = work + 1;
    return false;
  }
  const auto spent = now - c.start;
  // Kept before the budget is looked at, so that a batch cut at its first
  // measure leaves one too: short batches never measure, and a busy
  // machine cuts many at their first (a thread preempted meanwhile makes
  // the cost larger, and solo_most() smaller: the safe side).
  const auto each = spent / (work - c.started);
  work_cost_ = each;
  if (spent >= gulp_budget_) return true;
  const std::uint64_t fit = each.count() > 0
                                ? static_cast<std::uint64_t>((gulp_budget_ - spent) / each)
                                : defaults::gulp_clock_every * 2;
  c.next = work + std::clamp<std::uint64_t>(fit / 2, 1, defaults::gulp_clock_every);
  return false;
}

std::uint32_t runner::solo_most() const noexcept {
  if (work_cost_.count() <= 0 || gulp_budget_.count() <= 0) return defaults::solo_batch_most;
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(
      gulp_budget_ / work_cost_, defaults::claim_joins, defaults::solo_batch_most));
}

std::uint64_t runner::process(work_queue& q, std::uint32_t index) {
  gulp_clock c;
  return run_batch(q, index, ~std::uint64_t{0},
                   [&](std::uint64_t work) { return gulp_spent(work, c); });
}

std::uint64_t runner::process(work_queue& q, std::uint32_t index, const help_limit& limit) {
  gulp_clock c;
  return run_batch(q, index, ~std::uint64_t{0}, [&](std::uint64_t work) {
    return limit.reached() || gulp_spent(work, c);
  });
}

std::uint64_t runner::process_at_most(work_queue& q, std::uint32_t index, std::uint64_t most) {
  return run_batch(q, index, most, [](std::uint64_t) { return false; });
}

std::uint64_t runner::process_at_most(work_queue& q, std::uint32_t index, std::uint64_t most,
                                      std::chrono::steady_clock::time_point deadline) {
  return run_batch(q, index, most, [deadline](std::uint64_t) {
    return std::chrono::steady_clock::now() >= deadline;
  });
}

inline void runner::begin_batch(work_queue& q, std::uint32_t index) noexcept {
  // A batch taken up again with mail behind it runs without appends: an
  // earlier send of one of its actors may wait in that mail.
  start_batch(q, index, q.take_fresh(), q.mail_behind() ? 0 : local_batch_);
}

inline void runner::start_batch(work_queue& q, std::uint32_t index, std::uint32_t fresh,
                                std::uint32_t budget) noexcept {
  counters.gulps.add();
  counters.gulped_messages.add(fresh);
  current_ = &q;
  current_index_ = index;
  budget_ = budget;
  budget_start_ = budget;
  // A serial that wraps to 0 only keeps that one batch from claiming.
  if (claims_on_) batch_serial_ = ++serial_;
  claim_tried_ = false;
  conversed_ = false;
  foreign_ = false;
  mixed_ = false;
  merging_ = claims_on_;
  merges_left_ = 1;
  unchecked_merges_ = 0;
}

inline void runner::end_batch(work_queue& q, std::uint32_t index) noexcept {
  current_ = nullptr;
  current_index_ = no_queue;
  count_appended();
  if (conversed_)
    keep(q, index);
  else
    q.finish();
}

// q takes the place of the kept queue `instead` among the kept ones, which
// leaves them to be the batch in hand. Field by field, as in unkeep().
inline void runner::keep_instead(work_queue& q, std::uint32_t index,
                                 std::uint32_t instead) noexcept {
  const std::uint32_t at = kept_at_[instead];
  kept_at_[instead] = 0;
  q.batch().recycle();
  kept_[at - 1].queue = &q;
  kept_[at - 1].index = index;
  kept_at_[index] = at;
}

// After each envelope but the last, the batch is cut short once `most`
// have run or `enough(work)` says so: the rest stays for q's next gulp.
// Work counts the messages run, and one more per sends_per_unit sends
// they posted to mailboxes (appends to a batch are cheap, and counted at
// its end): the gulp clock estimates from it how far off its budget is
// (see read_gulp_clock), and a message that posts a burst weighs with it.
// Counted in messages alone, a few cheap messages at a batch's start made
// the clock skip the next 64, and 64 bursts of a thousand sends after
// them overshot a 100 µs budget by a millisecond; counted one for one, a
// message of a fork that posts a few dozen read the clock every time.
template <class Enough>
std::uint64_t runner::run_batch(work_queue& first, std::uint32_t first_index, std::uint64_t most,
                                Enough enough) {
  TACT_ASSERT(first.being_processed() && current_ == nullptr,
              "a runner processes a batch it gulped, one at a time");
  const behaviour_local_kept kept;
  // Batches do not nest on a runner that holds sends: a behaviour that
  // waits leaves its batch first (see suspend()).
  TACT_ASSERT(!outbox_open_, "a batch opens the outbox, closed between batches");
  outbox_open_ = outbox_ != nullptr;
  work_queue* q = &first;
  std::uint32_t index = first_index;
  begin_batch(*q, index);
  solo_ = false;
  const bool alone = claims_on_ && owner_.alone(index_);
  lone_ = alone || (claims_on_ && owner_.worker_count() == 1);
  if (alone) [[unlikely]] {
    solo_ = owner_.past_mark(solo_from_);
    if (!solo_) owner_.note_not_yet_alone();
  }
  // Empty here: a batch, or a behaviour resumed, posts it before it ends.
  if (outbox_ != nullptr && alone != outbox_->runs_alone()) [[unlikely]]
    outbox_->run_alone(alone);
  // The first batch after a park: two epochs on, the first whole one
  // begun after this batch (see parked_dry()).
  if (solo_from_ == ran_dry) solo_from_ = owner_.epochs_weighed() + 2;
  if (solo_) [[unlikely]] {
    solo_most_ = solo_most();
    absorb_all(*q);
    owner_.note_waiting(q->batch().size());
    // The batch stands for those of every queue it took in, and its own
    // queue's appends get the reach their merges have: cut at the local
    // budget, a send to itself (static_send) or a reply to an actor of the
    // queue in hand (ping_pong's pong) took the mailbox every 256 sends,
    // and the next batch took in all 32 queues again, under a lock each.
    // The gulp budget still bounds the turn in time (see below).
    if (budget_ != 0) budget_ = budget_start_ = std::max(budget_, solo_most_);
  }
  std::uint64_t processed = 0;
  std::uint64_t batch_began = 0;  // processed when the batch in hand began
  bool paused = false;
  // The budget was spent in a batch that merged: it runs to its end (see
  // below), and then the turn is over.
  bool draining = false;
  cut_ = false;
  const std::uint64_t sent_before = counters.messages_sent.get();
  const auto work = [&] {
    return processed + (counters.messages_sent.get() - sent_before) / sends_per_unit;
  };
  // Only a pool worker takes messages on its stack (see can_stack()).
  stack_open_ = claims_on_;
  for (;;) {
    copy_queue& batch = q->batch();
    // The envelope's words are read out before it runs (the behaviour may
    // append to this batch, which may move the array), one scalar load
    // each: a sender just wrote them with three 8-byte stores, and a wider
    // load spanning two of them could not be store-forwarded (a stall per
    // message when a behaviour feeds its own batch).
    while (!batch.empty()) {
      const envelope& next = batch.front();
      const run_fn run = next.run;
      void* const target = next.target;
      void* const message = next.message;
      batch.drop_front();
      running_target_ = target;
      // Claims come from a batch's last envelope, in a short batch, or in
      // one that merged: a conversation, however long it has run (its
      // batch holds one or two envelopes at a time, see merge()).
      at_last_ = batch.empty() &&
                 (processed - batch_began < defaults::claim_batch_most || foreign_);
      run(target, message);
      ++processed;
      // What went on the stack runs before the batch's next envelope, all
      // of it (see can_stack()); once the budget is spent, nothing new
      // goes on it.
      if (stack_size_ != 0) [[unlikely]] {
        do {
          const envelope& top = stack_[--stack_size_];
          const run_fn stacked_run = top.run;
          void* const stacked_target = top.target;
          void* const stacked_message = top.message;
          running_target_ = stacked_target;
          at_last_ = stack_size_ == 0 && batch.empty() &&
                     (processed - batch_began < defaults::claim_batch_most || foreign_);
          stacked_run(stacked_target, stacked_message);
          ++processed;
          if (stack_open_ && (processed >= most || enough(work()))) {
            // The turn is over: nothing new goes on the stack, and what
            // it holds goes into the batch, unrun, so that the next turn
            // goes on where this one stopped. Without the memory for
            // that, it runs now.
            stack_open_ = false;
            if (flush_stack_if_possible()) break;
          }
        } while (stack_size_ != 0);
      }
      // (A behaviour that waited took the batch to the held queue: empty,
      // and its stack into the batch first.)
      if (!batch.empty() && !draining && (processed >= most || enough(work()))) [[unlikely]] {
        // What waits when a turn run alone ends is a sample of the work's
        // parallelism (see executor::note_waiting).
        if (solo_) owner_.note_waiting(batch.size());
        if (mixed_) {
          // Envelopes of kept queues' actors may be in it: left for q's
          // next gulp, they would run while their own queues are let go
          // (see merge()). It takes no more sends, so what it holds now
          // is all that is left to run.
          merging_ = false;
          stack_open_ = false;
          budget_start_ -= budget_;  // what was appended stays counted
          budget_ = 0;
          draining = true;
          continue;
        }
        post_outbox();  // before the batch's actors may run elsewhere
        if (sleeper* parked = q->pause()) parked->wake();
        counters.batches_given_back.add();
        paused = true;
        break;
      }
    }
    post_outbox();  // before the batch ends or hands over
    // A batch whose last envelope made the one claim pending, or a hop,
    // hands over to the claimed batch here, as drain_claims would next,
    // without leaving this loop: a conversation between queues runs as
    // one long turn, bounded by the same budget as a batch (see keep()).
    // (A claim's serial is never 0: it matches only a batch that may claim.)
    // A hop with older claims pending waits its turn behind them, as a
    // claim (which then is not the only one: no hand-over).
    if (hop_.queue != nullptr && (paused || claims_count_ != 0)) hop_to_claim();
    if (paused || resumed_) break;
    const bool hop = hop_.queue != nullptr;
    if (draining) {
      if (hop) hop_to_claim();
      cut_ = true;
      break;
    }
    if (!hop) {
      if (claims_count_ != 1) break;
      if (const claim& c = claims_[claims_first_]; c.serial != batch_serial_ || c.queue == nullptr)
        break;
    }
    if (processed >= most || enough(work())) {
      if (hop) hop_to_claim();
      cut_ = true;
      break;
    }
    if (hop) {
      // The drained batch's queue, which conversed, is kept in the hop's
      // place: no claim in the ring, no list to shift.
      work_queue& to = *std::exchange(hop_.queue, nullptr);
      const std::uint32_t to_index = hop_.index;
      count_appended();
      keep_instead(*q, index, to_index);
      q = &to;
      index = to_index;
      // Its batch is the hop's one envelope (a local send, not gulped),
      // and nothing of its actors waits in its mailbox (try_rejoin read
      // none, and they have run nowhere else since): it may append from
      // the start, whatever its last gulp left behind.
      start_batch(*q, index, 0, local_batch_);
    } else {
      const claim next = take_oldest_claim();
      end_batch(*q, index);
      q = next.queue;
      index = next.index;
      q->take_up_claimed();
      begin_batch(*q, index);
    }
    batch_began = processed;
  }
  TACT_ASSERT(hop_.queue == nullptr, "a hop is handed over or made a claim within its batch");
  TACT_ASSERT(!sends_held_, "a batch ends with its outbox posted");
  TACT_ASSERT(stack_size_ == 0, "a batch ends with its stack run");
  stack_open_ = false;
  outbox_open_ = false;
  merging_ = false;
  solo_ = false;
  batch_serial_ = 0;
  if (paused && has_claims()) release_claims();
  // A behaviour waited (see suspend()): the rest of the batch went to the
  // held queue, leaving this one empty, and other contexts have been
  // running it since. Checked once per batch, not per message.
  if (resumed_) [[unlikely]] {
    counters.messages_processed.add(processed);
    return processed + after_resume(*q, index, running_target_);
  }
  // Unpinned only once the batch holds no pointer it read under the pin.
  unpin();
  counters.messages_processed.add(processed);
  if (paused) {
    current_ = nullptr;
    current_index_ = no_queue;
    count_appended();
  } else {
    end_batch(*q, index);
  }
  return processed;
}

void runner::step(work_queue& q, std::uint32_t index) {
  TACT_ASSERT(q.being_processed() && !q.batch().empty(), "a step runs a gulped, unfinished batch");
  // What a nested step interrupts: the step of another queue, whose
  // behaviour is waiting (see stepper).
  const behaviour_local_kept kept;
  runner* const outer_runner = std::exchange(this_thread_runner, this);
  work_queue* const outer = std::exchange(current_, &q);
  const std::uint32_t outer_index = std::exchange(current_index_, index);
  const std::uint32_t outer_budget = std::exchange(budget_, local_batch_);
  const std::uint32_t outer_budget_start = std::exchange(budget_start_, local_batch_);
  void* const outer_target = running_target_;
  copy_queue& batch = q.batch();
  const envelope next = batch.front();
  batch.drop_front();
  running_target_ = next.target;
  next.run(next.target, next.message);
  count_appended();
  counters.messages_processed.add();
  current_ = outer;
  current_index_ = outer_index;
  budget_ = outer_budget;
  budget_start_ = outer_budget_start;
  running_target_ = outer_target;
  this_thread_runner = outer_runner;
  if (!batch.empty()) return;
  // Unpinned only by the outermost step: an interrupted one may still
  // hold what it read under the pin.
  if (outer == nullptr) unpin();
  q.finish();
}

// Into the batch in hand's front, in the order the stack would have run
// them (see can_stack()): all of them, or none for lack of memory.
// Nothing to flush adds nothing of kept queues' actors: the batch stays
// one its budget may cut (a flush of an empty stack at the budget used to
// mark a batch that had stacked another queue's message mixed, and sieve's
// first filter then ran its whole backlog as one turn).
void runner::flush_stack() {
  if (stack_size_ == 0) return;
  current_->batch().push_front(stack_, stack_size_);
  stack_size_ = 0;
  if (foreign_) mixed_ = true;  // envelopes of kept queues' actors may be among them
}

// See can_stack(). Only a queue without mail: one with mail is about to be
// gulped by this runner anyway. Mail that came since the look moves into
// the batch in hand, behind what is there, as a solo turn's absorbed mail
// does (see absorb_all()).
bool runner::take_for_stack(std::uint32_t index) noexcept {
  if (index >= owner_.queue_count()) return false;  // a sponsor's
  work_queue& q = owner_.queue_at(index);
  if (q.being_processed() || q.queued() != 0 || holder_of(q, index) != holder::us) return false;
  // Sends of this batch's actors to q held in the outbox would otherwise
  // reach q's mailbox after later ones merged into this batch.
  post_outbox();
  const std::optional<std::uint32_t> taken = q.absorb(current_->batch());
  if (!taken) return false;
  keep(q, index);
  if (*taken != 0) {
    foreign_ = true;
    mixed_ = true;
    counters.gulps.add();
    counters.gulped_messages.add(*taken);
  }
  return true;
}

// One of the hungry worker's own queues that nobody processes, so that the
// share waits for nothing but that worker (or a thief, if it is slow to
// come). A thief nulls only its own slots for the moment of a swap, so
// one of them may be null while that worker steals. None found: the share
// stays here, and the worker stays hungry.
std::uint32_t runner::feed_hungry() noexcept {
  for (std::uint32_t w = 0; w < owner_.worker_count(); ++w) {
    if (w == index_) continue;
    pool_worker& other = owner_.worker_at(w);
    if (!other.hungry()) continue;
    const block b = other.owned();
    for (std::uint32_t slot = b.first; slot < b.last; ++slot) {
      const work_queue* q = owner_.slot(slot).load(std::memory_order_relaxed);
      if (q == nullptr || q->being_processed()) continue;
      return other.take_hunger() ? owner_.index_of(*q) : no_queue;
    }
  }
  return no_queue;
}

bool runner::give_oldest(std::uint32_t queue) noexcept {
  const std::uint64_t movable = anywhere_ & ((std::uint64_t{1} << stack_size_) - 1);
  if (movable == 0) return false;
  const auto at = static_cast<std::uint32_t>(std::countr_zero(movable));
  const envelope e = stack_[at];
  close_unchecked_merges();  // one of the batch's sends takes a mailbox after all
  try {
    owner_.post_now(*this, queue, e.target, e.message, e.run);
  } catch (const std::bad_alloc&) {
    return false;
  }
  --merged_;  // counted as sent by the post
  std::copy(stack_ + at + 1, stack_ + stack_size_, stack_ + at);
  const std::uint64_t below = (std::uint64_t{1} << at) - 1;
  anywhere_ = (anywhere_ & below) | ((anywhere_ >> 1) & ~below);
  --stack_size_;
  return true;
}

bool runner::flush_stack_if_possible() noexcept {
  try {
    flush_stack();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

bool runner::claim_or_join(work_queue& q, std::uint32_t index, void* target, void* message,
                           run_fn run) {
  if (hop_.queue != nullptr) hop_to_claim();  // a later send of the batch that hopped
  for (std::uint32_t i = 0; i < claims_count_; ++i) {
    claim& c = claims_[(claims_first_ + i) % claims_most];
    if (c.serial != batch_serial_) continue;
    // This batch has claimed: that queue only (released: none).
    if (c.queue != &q) return false;
    copy_queue& batch = q.batch();
    if (appends_held_ != 0 || batch.size() >= defaults::claim_joins) {
      // This send must take the mailbox (appends held), or a flood has
      // begun: the claim goes back to the owner (woken), who takes the
      // mailbox behind it while this batch goes on, not after it. A queue
      // flooded once is not claimed again: its sender comes back with the
      // next burst, and each claim would only be handed back.
      //
      // Kept, though, while the batch in hand holds other queues'
      // envelopes (merged, or taken in by a solo turn; see merge()): q
      // may be a queue it kept (rejoined, see rejoin()), whose actors may
      // still have envelopes in it, or be running now (a behaviour that
      // sends to its own queue). Handed back, q would run them on another
      // worker meanwhile: two behaviours of one actor at once, and its
      // later mail ahead of its earlier. The send takes q's mailbox, and
      // the claimed batch runs after this one, as claims do, with no
      // appends (work_queue::take_up_claimed): the sender may be one of
      // q's actors, and its later sends must not overtake this one.
      if (foreign_) return false;
      if (batch.size() >= defaults::claim_joins) flooded_ = index;
      if (sleeper* parked = q.pause()) parked->wake();
      // Released. The newest claim (as this batch's is, unless a
      // behaviour of it waited while later batches claimed) comes off the
      // ring's back; an older one stays, as a null entry drain skips.
      c.queue = nullptr;
      if (&c == &claims_[(claims_first_ + claims_count_ - 1) % claims_most]) --claims_count_;
      return false;
    }
    batch.push(envelope{target, message, run});
    counters.local_sends.add();
    return true;
  }
  // One try per batch: a batch that sends a burst would otherwise try at
  // every send, reading lines the queue's owner keeps writing. A queue
  // seen processed elsewhere is not claimed: no lock taken for nothing.
  if (!at_last_ || claim_tried_) return false;
  claim_tried_ = true;
  if (claims_count_ == claims_most) return false;
  // The claim takes q's mailbox: what the outbox holds for it goes first.
  post_outbox();
  if (kept(index)) return rejoin(q, index, target, message, run);
  if (index == flooded_ || q.being_processed()) return false;
  const holder h = holder_of(q, index);
  // With stealing off, queues stay with their workers (placement relies
  // on it): only our own are claimed.
  if (h == holder::other_busy && !owner_.stealing()) return false;
  if (!q.claim(envelope{target, message, run}, h == holder::other_busy)) return false;
  add_claim(q, index);
  return true;
}

// Queues q as this batch's claim, to run next.
void runner::add_claim(work_queue& q, std::uint32_t index) noexcept {
  record_claim(q, index);
  counters.claims.add();
}

void runner::record_claim(work_queue& q, std::uint32_t index) noexcept {
  claims_[(claims_first_ + claims_count_) % claims_most] = {&q, index, batch_serial_};
  ++claims_count_;
  conversed_ = true;
}

// Room in the ring: try_rejoin checked it, and the batch in hand adds no
// other claim before this (claim_tried_).
void runner::hop_to_claim() noexcept {
  work_queue& q = *std::exchange(hop_.queue, nullptr);
  unkeep(hop_.index);
  record_claim(q, hop_.index);
}

runner::claim runner::take_oldest_claim() noexcept {
  const claim c = claims_[claims_first_];
  claims_first_ = (claims_first_ + 1) % claims_most;
  --claims_count_;
  return c;
}

void runner::weigh_then_send(std::uint32_t queue, void* target, void* message, run_fn run) {
  if (weigh_merges()) {
    join_batch(target, message, run);
    if (lone_) open_unchecked_merges();
  } else if (!try_rejoin(queue, target, message, run))
    post_to_mailbox(owner_, this, queue, target, message, run);
}

// Below the bound, which is at most the reach: merges_left_ is 1 or more.
bool runner::weigh_merges() noexcept {
  const std::uint32_t size = current_->batch().size();
  if (size >= merge_bound()) {
    merging_ = false;
    return false;
  }
  merges_left_ = merge_reach() - size;
  return true;
}

void runner::keep(work_queue& q, std::uint32_t index) noexcept {
  // Mail its actors sent before it was taken may wait in other kept
  // queues, unseen by the looks that opened them.
  close_unchecked_merges();
  q.batch().recycle();
  kept_[kept_count_++] = {&q, index};
  kept_at_[index] = kept_count_;
}

void runner::absorb_all(const work_queue& in_hand) noexcept {
  copy_queue& batch = current_->batch();
  const auto absorb = [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t slot = first; slot < last; ++slot) {
      // A null slot: a thief's swap in flight (a worker just stood down).
      work_queue* q = owner_.slot(slot).load(std::memory_order_relaxed);
      if (q == nullptr || q == &in_hand || q->being_processed() ||
          batch.size() + q->queued() > solo_most_)
        continue;
      const std::uint32_t index = owner_.index_of(*q);
      if (kept(index)) continue;
      const std::optional<std::uint32_t> taken = q->absorb(batch);
      if (!taken) continue;
      keep(*q, index);
      if (*taken != 0) {
        foreign_ = true;
        mixed_ = true;
        counters.gulps.add();
        counters.gulped_messages.add(*taken);
      }
    }
  };
  absorb(owned_.first, owned_.last);
  owner_.for_each_covered(index_, owner_.active_workers(), absorb);
  open_unchecked_merges();
}

// merge() looks, on every send, at the receiving queue: nothing for its
// actors may wait in its mailbox (its count) or in its own batch (the
// hop's). A turn run alone makes those looks once, for every queue it
// keeps, right after absorb_all has taken in the last of them: the queues
// taken now, and those kept from its earlier batches, whose mailboxes may
// hold what those batches' outboxes posted. A batch that no other pool
// worker runs beside makes them at its first checked merge and at each
// reading of its size (weigh_then_send): every queue it keeps was taken
// before (kept at the end of its claimed batch), and one kept after
// closes them. Each earlier send of the kept
// queues' actors happens-before the read of its queue's count: made on
// this thread, it is sequenced before; made on another (a helping asker's
// runner that held the sender's queue while the turn took the others), it
// happens-before the take of the sender's queue (its lock, and the last
// processor's release of being_processed), which comes before the reads.
// Only this runner takes their mail in. So counts read as zero mean that
// none of it waits, and none of those actors runs anywhere else until the
// queues are let go. What could put mail of theirs in a kept queue's
// mailbox from then on is this runner alone, and each way closes the
// unchecked merges for the rest of the batch: a send that neither appends
// nor merges (post_to_mailbox and post_share: the mailbox, the outbox, a
// claim, a hop; give_oldest, a stacked message moved to a hungry worker),
// a parallel transactional actor's send (appends_held), a queue kept after
// now, whose actors may have sent before it was taken (keep()), and a
// behaviour that waits (suspend(), which takes the kept queues along).
// Until then a send to a kept queue merges on its mark alone, and marks
// the batch as one that merged, as merge() does. They are counted to the
// batch's bound (merge_bound(): the solo bound in a turn run alone, else an
// ordinary batch's) from its size, read here and again whenever the count
// runs out (weigh_unchecked_merges, which stops merging at the bound, as
// the first checked merge would): the bound is one of size, not an order
// condition, so nothing but a close ends them before it.
void runner::open_unchecked_merges() noexcept {
  if (!merging_ || appends_held_ != 0 || hop_.queue != nullptr || sends_held_) return;
  for (std::uint32_t i = 0; i < kept_count_; ++i)
    if (kept_[i].queue->queued() != 0) return;
  weigh_unchecked_merges();
}

void runner::weigh_unchecked_merges() noexcept {
  const std::uint32_t size = current_->batch().size();
  if (size < merge_bound())
    unchecked_merges_ = merge_reach() - size;
  else
    merging_ = false;
}

// Counted from the first batch after the park (see run_batch), not from
// the park: the epochs weighed while this worker was parked, or woken but
// not yet running (its thread preempted), weighed the other workers' work,
// and a count lowered on them would otherwise make its first batch of the
// new work a solo turn.
void runner::parked_dry() noexcept { solo_from_ = ran_dry; }

void runner::unkeep(std::uint32_t index) noexcept {
  const std::uint32_t at = kept_at_[index] - 1u;
  kept_at_[index] = 0;
  if (at + 1 != kept_count_) {
    // Field by field: a whole-entry copy would be one wide load across the
    // two narrower stores keep() made, which cannot be store-forwarded.
    const kept_queue& last = kept_[kept_count_ - 1];
    const std::uint32_t moved = last.index;
    kept_[at].queue = last.queue;
    kept_[at].index = moved;
    kept_at_[moved] = at + 1;
  }
  --kept_count_;
}

bool runner::rejoin(work_queue& q, std::uint32_t index, void* target, void* message, run_fn run) {
  copy_queue& batch = q.batch();
  // Lock-free unless mail waits: a zero count means every earlier send of
  // this batch's actors to q has been taken in (see keep() in runner.hpp).
  if (appends_held_ != 0 || q.queued() != 0) counters.gulped_messages.add(q.regulp(batch));
  // A claim from here on, before the push: if the push throws, the mail
  // just taken in still runs, as the claimed batch.
  unkeep(index);
  add_claim(q, index);
  batch.push(envelope{target, message, run});
  counters.local_sends.add();
  return true;
}

void runner::finish_kept() noexcept {
  for (std::uint32_t i = 0; i < kept_count_; ++i) {
    kept_at_[kept_[i].index] = 0;
    kept_[i].queue->finish();
  }
  kept_count_ = 0;
}

// A queue belongs to the worker whose block holds its slot (see
// executor::slot_hint), or to the one covering it while that worker
// rests. A hint that no longer names the queue's slot (a swap in flight)
// leaves its owner unknown: another busy worker's, as far as claims go
// (work_queue::claim then asks whether its owner is parked on it).
runner::holder runner::holder_of(const work_queue& q, std::uint32_t index) const noexcept {
  const std::uint32_t slot = owner_.slot_hint(index);
  if (owner_.slot(slot).load(std::memory_order_relaxed) != &q) return holder::other_busy;
  const std::uint32_t home = owner_.covering(owner_.home_worker(slot));
  if (home == index_) return holder::us;
  return owner_.stealing() && owner_.worker_at(home).idle() ? holder::other_idle
                                                            : holder::other_busy;
}

std::uint64_t runner::drain_claims(std::uint32_t most) {
  std::uint64_t ran = 0;
  for (std::uint32_t n = 0; n < most && claims_count_ != 0; ++n) {
    const claim c = take_oldest_claim();
    if (c.queue == nullptr) continue;
    c.queue->take_up_claimed();
    ran += process(*c.queue, c.index);
    // A conversation that ran its whole budget gives the sweep its turn.
    if (cut_) break;
  }
  if (kept_count_ != 0) finish_kept();
  return ran;
}

void runner::release_claims() noexcept {
  if (hop_.queue != nullptr) hop_to_claim();
  while (claims_count_ != 0) {
    const claim c = take_oldest_claim();
    if (c.queue == nullptr) continue;
    if (sleeper* parked = c.queue->pause()) parked->wake();
  }
  if (kept_count_ != 0) finish_kept();
}

std::uint32_t runner::new_actor_home(bool beside) noexcept {
  return beside && current_index_ != no_queue && claims_on_ ? current_index_ : next_own_queue();
}

std::uint32_t runner::next_own_queue() noexcept {
  const std::uint32_t span = owned_.last - owned_.first;
  if (span == 0) return owner_.next_queue();
  const std::uint32_t slot = owned_.first + spread_;
  spread_ = spread_ + 1 == span ? 0 : spread_ + 1;
  return owner_.index_of(owner_.owned_queue(slot));
}

}  // namespace tact::detail
