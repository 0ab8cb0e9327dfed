#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include <tact/detail/atomic.hpp>

#include "mailbox/copy_queue.hpp"
#include "mailbox/sleeper.hpp"
#include "support/assert.hpp"
#include "support/spinlock.hpp"

namespace tact::detail {

// One mailbox shard (Cforall thesis, "CFA Executor"): a lock, the mailbox copy
// queue senders append to, and being_processed. Many actors share a work
// queue; all messages to one classic actor go to one work queue, which is
// what gives per-sender FIFO and one message at a time per actor.
//
// A gulp takes the whole mailbox at once by swapping it, under the lock,
// with this queue's second copy queue (the batch); the gulping worker then
// drains the batch with no lock and no atomics while senders keep
// appending to the now empty mailbox. Each work queue keeps its own pair of
// copy queues, so each stays sized for its own traffic instead of chunks
// migrating between busy and idle queues and regrowing.
class work_queue {
 public:
  enum class gulp_result { empty, busy, taken };

  explicit work_queue(std::uint32_t floor) noexcept : mailbox_{floor}, batch_{floor} {}

  // ---- any thread ----

  // Whom a post must wake: the sleeper registered waiting for mail on this
  // queue (its owner, parked), and the one that waits while holding it (a
  // behaviour of this queue is suspended there, see register_holder);
  // either may be null.
  struct sleepers {
    sleeper* waiter;
    sleeper* holder;

    void wake() const noexcept {
      if (waiter != nullptr) waiter->wake();
      if (holder != nullptr) [[unlikely]]
        holder->wake();
    }
  };

  // Appends `e` and returns the sleepers it must wake, unregistering them.
  sleepers post(const envelope& e) {
    std::lock_guard guard{lock_};
    mailbox_.push(e);
    return posted(1);
  }

  // Appends e[0], ..., e[n - 1], in order, in one lock section, for
  // envelopes that must all be posted (a runner's outbox): chunks of
  // `backup` stand in where the mailbox cannot grow. Returns the sleepers
  // to wake (see post()). @pre backup has n chunks or more.
  sleepers post_held(const envelope* e, std::uint32_t n, copy_queue::backup& backup) noexcept {
    TACT_ASSERT(backup.size() >= n, "held envelopes come with a backup chunk each");
    std::lock_guard guard{lock_};
    for (std::uint32_t i = 0; i < n; ++i) mailbox_.push(e[i], backup);
    return posted(n);
  }

  // A post and a gulp in one lock section, for a runner that will process
  // this queue itself, soon (see runner::post_claimed): appends `e` and,
  // unless someone processes the queue or a batch cut short waits in it,
  // takes the whole mailbox as the batch, `e` last, and marks the queue
  // processed. Returns whether it did; if not, nothing changed. Nobody is
  // woken: the claimer runs the batch. A registered waiter stays
  // registered, so mail that others post meanwhile still wakes it.
  // Throws std::bad_alloc if the mailbox cannot grow; nothing changed then.
  //
  // `asleep_only`: only if a sleeper is registered waiting for mail here
  // (the queue's owner, parked): a queue whose owner is awake is left to
  // it, so that workers that all have work keep their actors.
  bool claim(const envelope& e, bool asleep_only) {
    std::lock_guard guard{lock_};
    // Acquire, as in gulp(): the last processor is done with the batch.
    if (being_processed_.load(std::memory_order_acquire) || carried_ != 0 ||
        (asleep_only && waiter_ == nullptr))
      return false;
    mailbox_.push(e);  // first: if it throws, nothing changed
    being_processed_.store(true, std::memory_order_relaxed);  // read under the lock
    mailbox_.swap(batch_);
    fresh_ = batch_.size();
    mail_behind_ = false;
    pending_.store(0, std::memory_order_relaxed);
    return true;
  }

  // A gulp into another queue's batch, for a runner that runs this
  // queue's actors in that batch from now on (runner::absorb_all): unless
  // someone processes this queue or a batch cut short waits in it, marks
  // it processed and moves its mail, in order, to the end of `into`.
  // Returns how many envelopes it moved, or nothing if it did not take the
  // queue. If `into` cannot grow, the rest stays in the mailbox, counted
  // as waiting: it is newer than what moved, and the runner takes it in
  // later. Nobody is woken: the runner holds the queue.
  std::optional<std::uint32_t> absorb(copy_queue& into) noexcept {
    std::lock_guard guard{lock_};
    // Acquire, as in gulp(): the last processor is done with its actors.
    if (being_processed_.load(std::memory_order_acquire) || carried_ != 0) return std::nullopt;
    being_processed_.store(true, std::memory_order_relaxed);  // read under the lock
    std::uint32_t moved = 0;
    try {
      for (; !mailbox_.empty(); ++moved) {
        into.push(mailbox_.front());
        mailbox_.drop_front();
      }
      mailbox_.recycle();
    } catch (const std::bad_alloc&) {
    }
    fresh_ = 0;
    mail_behind_ = false;
    pending_.store(mailbox_.size(), std::memory_order_relaxed);
    return moved;
  }

  // The "test" of test-and-gulp: an unlocked, possibly stale look. Mail it
  // misses is found on a later sweep (and parking re-checks under the lock).
  bool looks_empty() const noexcept { return pending_.load(std::memory_order_relaxed) == 0; }
  std::uint32_t queued() const noexcept { return pending_.load(std::memory_order_relaxed); }

  // Another unlocked hint, for thieves choosing a queue.
  bool being_processed() const noexcept { return being_processed_.load(std::memory_order_relaxed); }

  // Envelopes the queue's chunks can hold now: what it keeps allocated (the
  // batch's only while nobody processes it). For tests and statistics.
  std::uint64_t capacity() noexcept {
    std::lock_guard guard{lock_};
    // Acquire pairs with finish(): the last batch's recycling is seen.
    const bool processed = being_processed_.load(std::memory_order_acquire);
    return std::uint64_t{mailbox_.capacity()} + (processed ? 0 : batch_.capacity());
  }

  // ---- the worker that owns this queue (or steals it) ----

  // Takes the whole mailbox into the batch and marks the queue processed,
  // unless someone is already processing it (busy) or there is no mail. A
  // batch cut short (see pause()) is taken back first, as it is, and the
  // mailbox left for the gulp after: it holds only later mail.
  gulp_result gulp() noexcept {
    std::lock_guard guard{lock_};
    // Acquire pairs with finish()'s and pause()'s release: whoever
    // processed this queue last is done with the batch and with the
    // actors' state.
    if (being_processed_.load(std::memory_order_acquire)) return gulp_result::busy;
    if (carried_ != 0) {
      being_processed_.store(true, std::memory_order_relaxed);  // read under the lock
      carried_ = 0;
      // fresh_ stays: a claimed batch handed back unrun is still uncounted.
      mail_behind_ = !mailbox_.empty();
      pending_.store(mailbox_.size(), std::memory_order_relaxed);
      return gulp_result::taken;
    }
    if (mailbox_.empty()) return gulp_result::empty;
    being_processed_.store(true, std::memory_order_relaxed);  // read under the lock
    mailbox_.swap(batch_);
    fresh_ = batch_.size();
    mail_behind_ = false;
    pending_.store(0, std::memory_order_relaxed);
    return gulp_result::taken;
  }
  // Envelopes gulp() or claim() took from the mailbox that nobody has
  // counted yet, then none: for the statistics, each counted once however
  // the batch goes on (sends appended to it, cut short and taken back,
  // claimed and handed back unrun). @pre as for batch().
  std::uint32_t take_fresh() noexcept { return std::exchange(fresh_, 0); }
  // Whether the mail behind the batch may include sends from this queue's
  // own actors, so that sends from them must not join the batch now (see
  // runner::try_append): they would overtake it. So it is when the last
  // gulp took back a batch cut short while the mailbox held mail (made by
  // the batch before it was cut), and when a claimed batch is taken up
  // with mail that came since the claim (see take_up_claimed()).
  // @pre as for batch().
  bool mail_behind() const noexcept { return mail_behind_; }
  // For the runner that claimed this queue, as it takes up the claimed
  // batch to run it: its actors may have run on that runner since the
  // claim, merged into another queue's batch or from the stack, and their
  // sends to this queue that could not join the claimed batch took the
  // mailbox. Any mail waiting counts as behind the batch. The count, read
  // relaxed, shows those sends: the runner made them. @pre as for batch().
  void take_up_claimed() noexcept {
    if (queued() != 0) mail_behind_ = true;
  }

  // The gulped messages. @pre only between a taken gulp and finish(), only
  // by the thread that gulped.
  copy_queue& batch() noexcept {
    TACT_ASSERT(being_processed(), "a batch is touched only while its queue is gulped");
    return batch_;
  }
  // What senders have appended since the last gulp, and the batch (being
  // processed, or cut short and waiting for the next gulp; empty
  // otherwise), for inspection by the deterministic executor, when no
  // other thread runs (see stepper).
  const copy_queue& mailbox() const noexcept { return mailbox_; }
  const copy_queue& unfinished_batch() const noexcept { return batch_; }

  // After draining the batch: recycles it and lets the queue be gulped
  // again. Release: the next gulp, on any worker, sees all our effects.
  // @pre the caller gulped the queue, and the batch is drained.
  void finish() noexcept {
    TACT_ASSERT(being_processed(), "a queue is finished by the thread that gulped it");
    batch_.recycle();
    being_processed_.store(false, std::memory_order_release);
  }

  // A runner that stops partway through its batch (its gulp budget spent,
  // a guest whose ask was answered, a sponsor's run at its budget) leaves
  // the rest in the batch and lets the queue be gulped again: the next
  // gulp, by whichever runner, takes that rest first and the mailbox only
  // after it, so per-sender order holds. Nothing is copied, so this costs
  // the same however much mail waits. Returns the sleeper registered
  // waiting for mail (parked before the queue had any), to wake.
  // @pre the caller gulped the queue, its batch is not empty, and it holds
  // no behaviour of it suspended.
  sleeper* pause() noexcept {
    TACT_ASSERT(being_processed() && !batch_.empty(),
                "a batch is cut short by the thread that gulped it, with mail left");
    std::lock_guard guard{lock_};
    carried_ = batch_.size();
    pending_.store(mailbox_.size() + carried_, std::memory_order_relaxed);
    // Release, as in finish(): the next gulp sees what this batch did, and
    // the rest of it.
    being_processed_.store(false, std::memory_order_release);
    return std::exchange(waiter_, nullptr);
  }

  // Parking: registers `w` to be returned by the next post(), provided
  // the mailbox is empty now. Under the lock, so a post either happened
  // before (and we see its mail) or happens after (and sees `w`).
  //
  // `slot`: the ownership slot through which `w` holds this queue, or
  // null for a queue nobody can steal (a sponsor's). The registration is
  // refused if the slot no longer holds this queue. Without that check a
  // worker that loaded its slot, was preempted, and registered late would
  // overwrite the registration of the thief that had meanwhile taken the
  // queue and parked: the thief's mail would then wake the wrong worker,
  // and the thief sleep on it. With it, of two registrations under this
  // lock the later one is the current owner's: a thief registers only
  // after its swap, and a worker whose lock section follows the thief's
  // (so follows the swap) sees the swap in its slot and is refused.
  //
  // `holds`, if given, must still read `held` under the lock: the
  // executor's count of running workers, for a worker that registers on a
  // resting worker's queue because that count made it the queue's
  // sweeper (see executor::register_covered). The count may change while
  // it registers, and the queue's new sweeper registers after the change:
  // without the check a late registration would overwrite its, as a late
  // owner's would a thief's above.
  bool register_waiter(sleeper* w, const atomic<work_queue*>* slot,
                       const std::atomic<std::uint32_t>* holds = nullptr,
                       std::uint32_t held = 0) noexcept {
    std::lock_guard guard{lock_};
    if (!mailbox_.empty() || carried_ != 0) return false;
    if (slot != nullptr && slot->load(std::memory_order_seq_cst) != this) return false;
    if (holds != nullptr && holds->load(std::memory_order_seq_cst) != held) return false;
    waiter_ = w;
    return true;
  }

  // ---- the runner holding this queue (see runner::suspend) ----

  // Takes the mail that came since the gulp into `into` (the holder's
  // drained batch, see held_queue), whose array becomes the mailbox's;
  // returns how many (0: there was none). The queue stays being_processed.
  std::uint32_t regulp(copy_queue& into) noexcept {
    std::lock_guard guard{lock_};
    if (mailbox_.empty()) return 0;
    into.recycle();
    mailbox_.swap(into);
    pending_.store(0, std::memory_order_relaxed);
    return into.size();
  }

  // As register_waiter, for the worker holding the queue while it waits:
  // a post either came before (we see its mail) or sees `w`. A separate
  // registration, since the queue's slot may belong to another worker
  // (stolen while held), who registers as its waiter.
  bool register_holder(sleeper* w) noexcept {
    std::lock_guard guard{lock_};
    if (!mailbox_.empty()) return false;
    holder_ = w;
    return true;
  }
  // The holder lets go: a later post need not wake it.
  void forget_holder() noexcept {
    std::lock_guard guard{lock_};
    holder_ = nullptr;
  }

  // Allocates the first chunks not yet allocated now, on the calling thread (so
  // from its NUMA node); the batch only if nobody is processing it.
  // Acquire, as in gulp(): the batch is the last processor's until its
  // finish(), whose writes to it (recycle) the lock does not order.
  void allocate_here() {
    std::lock_guard guard{lock_};
    mailbox_.reserve();
    if (!being_processed_.load(std::memory_order_acquire)) batch_.reserve();
  }

  // ---- after the workers have stopped ----

  // Drops what is still queued, passing each envelope to `drop(envelope)`,
  // which must not throw and returns how many messages the envelope held,
  // until none is left; returns how many messages that was. Each is taken
  // out under the lock and dropped outside it: a drop may free a message
  // or an actor whose destructor sends, perhaps to this queue.
  template <class Drop>
  std::uint32_t discard(Drop&& drop) noexcept {
    std::uint32_t dropped = 0;
    for (;;) {
      envelope e{};
      {
        std::lock_guard guard{lock_};
        // A batch cut short holds the oldest mail: dropped first.
        if (carried_ != 0) {
          e = batch_.pop();
          pending_.store(mailbox_.size() + --carried_, std::memory_order_relaxed);
          if (carried_ == 0) batch_.recycle();
        } else if (mailbox_.empty()) {
          mailbox_.recycle();
          pending_.store(0, std::memory_order_relaxed);
          return dropped;
        } else {
          e = mailbox_.pop();
          pending_.store(mailbox_.size(), std::memory_order_relaxed);
        }
      }
      dropped += drop(e);
    }
  }

 private:
  // Under the lock, after `added` envelopes went into the mailbox: counts
  // them, and takes the sleepers they must wake. Counted up from before:
  // every store to pending_ is made under the lock (and a chained
  // mailbox's size would take more reads).
  sleepers posted(std::uint32_t added) noexcept {
    pending_.store(pending_.load(std::memory_order_relaxed) + added, std::memory_order_relaxed);
    sleeper* const holder = holder_;
    if (holder != nullptr) [[unlikely]]
      holder_ = nullptr;
    return {std::exchange(waiter_, nullptr), holder};
  }

  // Senders' line.
  spinlock lock_;
  atomic<std::uint32_t> pending_{0};       // mailbox size + carried_, for looks_empty()
  sleeper* waiter_ = nullptr;              // guarded by lock_
  sleeper* holder_ = nullptr;              // guarded by lock_
  // Envelopes a batch cut short left in batch_ for the next gulp (see
  // pause()); guarded by lock_. Nonzero only while nobody processes.
  std::uint32_t carried_ = 0;
  copy_queue mailbox_;                     // guarded by lock_

  // The processing worker's line.
  alignas(64) atomic<bool> being_processed_{false};
  // Owned by whoever set being_processed_; between a pause() and the next
  // gulp, the lock guards what is left in it.
  copy_queue batch_;
  // See take_fresh(). Owned as batch_ is (no atomics needed): set under
  // the lock by the gulp or claim that sets being_processed_, then read
  // and cleared only by that processor.
  std::uint32_t fresh_ = 0;
  bool mail_behind_ = false;  // see mail_behind()
};

// Parking: registers `w` as the waiter of the queue that ownership slot
// `slot` holds now, through that slot (see work_queue::register_waiter).
// The load is sequentially consistent: a thief's swap into the slot
// either comes before it (we register on the new queue) or after our
// parker's `parking` store, which the thief then sees (see parker.hpp).
inline bool register_through(const atomic<work_queue*>& slot, sleeper* w) noexcept {
  return slot.load(std::memory_order_seq_cst)->register_waiter(w, &slot);
}

}  // namespace tact::detail
