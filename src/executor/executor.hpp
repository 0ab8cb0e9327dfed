#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tact/config.hpp>
#include <tact/defaults.hpp>
#include <tact/detail/atomic.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/diagnostic.hpp>
#include <tact/stats.hpp>

#include "executor/epochs.hpp"
#include "executor/governor.hpp"
#include "executor/lending.hpp"
#include "executor/placement.hpp"
#include "executor/pool_worker.hpp"
#include "executor/quiescence.hpp"
#include "executor/runner.hpp"
#include "executor/seam.hpp"
#include "executor/stepper.hpp"
#include "mailbox/work_queue.hpp"
#include "support/fixed_array.hpp"
#include "support/padded.hpp"

namespace tact {
class actor_system;
}

namespace tact::detail {

// The message-centric executor (Cforall thesis): M work queues in a master
// array (senders post by queue index), and the ownership array of M
// pointers in which each of the N pool workers owns a contiguous block. A
// worker only ever reaches its queues through the ownership array, so work
// stealing can move a queue between workers by swapping two pointers there.
//
// It owns its parts and ties them together: the pool workers, the threads
// it borrows (lending), quiescence, the epochs, or, for a deterministic
// executor, the stepper instead of threads. The actor models see it only
// through seam.hpp.
class executor {
 public:
  // Validates the configuration (std::invalid_argument) and starts workers,
  // placed as `place(worker count)` says (by default: anywhere). With a
  // `plan`, starts no thread: the stepper runs the queues on whichever
  // thread drives stepping() (the deterministic executor; config.workers
  // must be 1).
  executor(const system_config& config, actor_system& owner,
           const std::function<placement(std::uint32_t workers)>& place = {},
           const step_plan* plan = nullptr);
  ~executor();
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  // ---- queries; any thread ----

  const system_config& config() const noexcept { return config_; }
  actor_system& owner() const noexcept { return owner_; }
  std::uint32_t worker_count() const noexcept { return worker_count_; }
  std::uint32_t queue_count() const noexcept { return queue_count_; }
  // Runners of this executor, of every role (see runner::index).
  std::uint32_t runner_count() const noexcept { return 2 * worker_count_ + config_.sponsors; }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_seq_cst); }
  const std::atomic<bool>& stopping_flag() const noexcept { return stopping_; }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
  // Whether idle workers steal queues (a policy other than none, and
  // someone to steal from).
  bool stealing() const noexcept {
    return config_.steal != steal_policy::none && worker_count_ > 1;
  }
  // The counters and gauges (see system_stats), read without stopping
  // anyone: each counter where its runner writes it, each queue's length
  // from the hint senders keep.
  system_stats stats() const;
  // The deterministic executor's driver, or nullptr for a threaded one.
  stepper* stepping() const noexcept { return stepper_.get(); }

  // The runner of this executor on the calling thread, or nullptr.
  runner* this_runner() const noexcept { return detail::this_runner(*this); }

  // With checks on: whether `ex` is an executor constructed and not yet
  // destroyed (see live() in seam.hpp). Takes the list's lock.
  static bool live(const executor* ex) noexcept;

  // The executor actors join by default on this thread (see actor::actor()):
  // an ambient_scope's, else the running runner's, else the process
  // default. nullptr if none.
  static executor* ambient() noexcept;
  // The scope, and the queue that actors created in it take (a sponsor's;
  // runner::no_queue: round robin).
  static void set_scope(executor* scope, std::uint32_t home) noexcept;
  static executor* scope() noexcept;
  static std::uint32_t scope_home() noexcept;
  // The queue the scope on this thread gives this executor's new actors,
  // or runner::no_queue.
  std::uint32_t home_in_scope() const noexcept;

  // ---- for the actor models, through seam.hpp; any thread ----

  // A new actor: counts it alive and returns its queue (the ambient
  // scope's, else new_home(beside)). std::logic_error once the system is
  // stopping.
  std::uint32_t admit(bool beside = false);
  // The home queue of an actor created now. Created by a behaviour that a
  // runner of this executor runs: one of that runner's own queues, round
  // robin, so that a conversation between creator and created starts on
  // one worker (stealing spreads it when there is work to share), or, if
  // `beside`, the queue that runner has in hand (runner::new_actor_home);
  // else round robin over all queues.
  std::uint32_t new_home(bool beside = false) noexcept;
  // A queue of worker `worker`'s block for an actor placed there, round
  // robin over its slots: the queue in the slot now (the slot's own queue
  // while a swap empties it). @pre worker < worker_count().
  std::uint32_t queue_on_worker(std::uint32_t worker) noexcept;
  // The pool worker whose block holds `queue` now, or runner::no_queue
  // (a sponsor's queue, or one a swap is moving). A snapshot.
  std::uint32_t worker_holding(std::uint32_t queue) const noexcept;
  // Whether `queue` is a sponsor's.
  bool sponsored(std::uint32_t queue) const noexcept { return lending_.sponsored(queue); }
  // A queue for a message sent from a thread that runs no runner of this
  // executor, or for an actor created there: round robin over all queues.
  std::uint32_t next_queue() noexcept {
    return foreign_.ticket.fetch_add(1, std::memory_order_relaxed) % queue_count_;
  }
  void count(tally what) noexcept;
  // A classic actor whose queue was `home` finished, or was destroyed
  // before it finished: counted, and unbound from its sponsor if it had one.
  void actor_finished(std::uint32_t home) noexcept;
  // Appends the envelope {target, message, run} to queue `queue` and wakes
  // whoever sleeps on it. `self`: this_runner(). The same-queue append is
  // the fast path (see post() in seam.hpp); this is everything else.
  void post_to_mailbox(runner* self, std::uint32_t queue, void* target, void* message, run_fn run);
  // Its last step for a runner's send: into the mailbox at once, waking
  // whoever sleeps on it, whatever the batch in hand (neither claimed nor
  // held in the outbox). Also the whole path of a share of work handed to
  // a hungry worker (see runner::hungry_queue), `queue` being one of its:
  // claimed, the share came back to the sender's worker and left the
  // hungry one fed with nothing until it ran something; held, it waited
  // for the batch's end. A share is a message that may run in any order,
  // so overtaking the sender's held sends breaks nothing.
  void post_now(runner& self, std::uint32_t queue, void* target, void* message, run_fn run);
  // Appends e[0], ..., e[n - 1] to queue `queue` in one lock section and
  // wakes whoever sleeps on it: a runner's outbox (see runner::hold_send),
  // which cannot fail, with a chunk in `backup` for each envelope.
  void post_held(runner& self, std::uint32_t queue, const envelope* e, std::uint32_t n,
                 copy_queue::backup& backup) noexcept;
  // Hands a diagnostic to the configured handler.
  void report(diagnostic_kind kind, std::string text, std::exception_ptr error = {}) const noexcept;
  // A message was destroyed without being sent (checks): the first is
  // reported at once, the rest counted and summed up by stop(), so a
  // program that does this in a loop is told once, not flooded.
  void note_unsent_message() noexcept;
  // No memory for `what` where the engine cannot fail: the work waits and
  // is retried. Counted once per piece of work (memory_waits) and reported
  // (out_of_memory) at the 1st, 2nd, 4th, 8th... time, so a long shortage
  // is heard of without a flood; a report that itself finds no memory is
  // skipped.
  void note_memory_wait(const char* what) noexcept;
  // Work an actor model keeps for lack of memory (see postponed_work in
  // seam.hpp). has_postponed() is a hint for the workers' loop, exact
  // enough for parking: postponed_begins() stores it before it wakes a
  // parked worker, and a parking worker loads it after it stores its
  // parking state (all sequentially consistent), so one of them sees the
  // other.
  void keep_postponed(postponed_work work) noexcept { postponed_work_ = work; }
  bool has_postponed() const noexcept { return postponed_.load(std::memory_order_seq_cst); }
  bool retry_postponed() noexcept { return postponed_work_.retry(postponed_work_.arg); }
  void postponed_begins() noexcept;
  void postponed_ends() noexcept;
  // Deferred reclamation for pointers runners read without counting
  // references; participants are the runners, by index.
  epochs& reclamation() noexcept { return epochs_; }

  // ---- threads lent to the executor (see lending) ----

  lending& lent() noexcept { return lending_; }
  // Sends promised by something outside the runners (one per armed
  // timer): while any is outstanding, stop() does not report idle live
  // actors as waiting for a send that cannot come.
  void promise_posts(std::int32_t change) noexcept {
    promised_posts_.fetch_add(change, std::memory_order_relaxed);
  }

  // ---- lifecycle (not from a runner of this executor: std::logic_error) ----

  void await_quiescence();
  // `before_join` runs once every actor has finished, while workers still
  // take messages: for what must stop posting first (the timer thread).
  void stop(const std::function<void()>& before_join = {});

  // ---- for the executor's parts ----

  // The ownership array's slot (the thesis's worker_queues[slot]); null
  // while a thief swaps it (see try_swap).
  atomic<work_queue*>& slot(std::uint32_t slot) noexcept { return ownership_[slot]; }
  // A worker's own slot, which only it could have nulled: never null.
  work_queue& owned_queue(std::uint32_t slot) noexcept {
    return *ownership_[slot].load(std::memory_order_relaxed);
  }
  work_queue& queue_at(std::uint32_t index) noexcept { return queues_[index]; }
  // The slot that holds queue `index`: its own until stealing moves it,
  // then the one the last swap put it in (see thief::take). A hint, for
  // whom a claim would take a queue from: two swaps of one queue at once
  // may leave it naming the earlier slot, and a reader checks that the
  // slot holds the queue. @pre index < queue_count().
  std::uint32_t slot_hint(std::uint32_t index) const noexcept {
    return slot_of_[index].load(std::memory_order_relaxed);
  }
  void moved(const work_queue& q, std::uint32_t slot) noexcept {
    slot_of_[index_of(q)].store(slot, std::memory_order_relaxed);
  }
  // The worker whose block holds slot `index` (and so holds queue `index`
  // until stealing moves it): the inverse of the blocks' split.
  // @pre index < queue_count().
  std::uint32_t home_worker(std::uint32_t index) const noexcept {
    return static_cast<std::uint32_t>((std::uint64_t{index} * worker_count_ + worker_count_ - 1) /
                                      queue_count_);
  }
  std::uint32_t index_of(const work_queue& q) const noexcept {
    return static_cast<std::uint32_t>(static_cast<const padded<work_queue>*>(&q) - queues_.begin());
  }
  pool_worker& worker_at(std::uint32_t index) noexcept { return workers_[index]; }
  // How many pool workers are idle (see pool_worker::idle()), each
  // counted by itself as its flag changes.
  std::atomic<std::uint32_t>& idle_workers() noexcept { return idle_workers_; }
  // How many pool workers are hungry (see pool_worker::hungry()), counted
  // the same way.
  std::atomic<std::uint32_t>& hungry_workers() noexcept { return hungry_workers_; }
  // Parked workers and guest passes, counted toward quiescence.
  quiescence& quiet() noexcept { return quiescence_; }
  // Called by a worker that has just stopped being parked, with stealing
  // on: if no parked worker is watching for stranded queues, wakes one
  // that sleeps (see pool_worker::watch).
  void keep_watch() noexcept;

  // ---- how many workers run (see governor.hpp) ----

  // Workers 0 .. active_workers() - 1 run; the others rest (parked, in
  // parker::resting), and a resting worker w's queues are swept by
  // covering(w), which registers on them when it parks. Relaxed: a hint
  // for sweeps and claims, exact for parking (see register_covered).
  std::uint32_t active_workers(std::memory_order order = std::memory_order_relaxed) const noexcept {
    return active_.load(order);
  }
  bool resting(std::uint32_t worker,
               std::memory_order order = std::memory_order_relaxed) const noexcept {
    return worker >= active_workers(order);
  }
  // Pool worker `worker` runs alone (a solo turn) where both hold.
  // alone(): the governor has stood every other worker down, and they all
  // rest (a hint, as the count is). Its turns then take all the queues it
  // sweeps into one batch (see runner::absorb_all). Not before the others
  // rest: one that finishes its last batch still sends to the queues it
  // would take. past_mark(): the governor has weighed `from` epochs (see
  // epochs_weighed()): a worker that ran dry sets that past the first
  // whole epoch after its next batch begins (see runner::parked_dry), so
  // that the count chosen for work that stopped does not take in the next
  // work, often sent by another thread into a quiescent system, as one
  // batch behind whichever of its behaviours runs first (see "Stuck
  // runners" in docs/design.md). A count set by hand (set_active) holds
  // from the start.
  bool alone(std::uint32_t worker) const noexcept {
    return worker == 0 && worker_count_ > 1 && active_workers() == 1 && others_rest();
  }
  bool past_mark(std::uint64_t from) const noexcept {
    return epochs_weighed() >= from || adaptation_.by_hand.load(std::memory_order_relaxed);
  }
  // A worker running alone found `waiting` messages waiting to run (at the
  // start of its turn, and where its budget ran out): whether the work
  // had anything to share, for the governor (see governor::sharing). Each
  // bit is set at most once an epoch (a read first, and the atomic or
  // only where the bit is clear), read and cleared at its end; a sample
  // counted in the next epoch instead is harmless.
  void note_waiting(std::uint32_t waiting) noexcept {
    note_turn_alone(waiting >= 2 ? saw_two : saw_one_at_most);
  }
  // A worker the others left alone began a batch that is not a turn alone
  // yet, for its mark (see past_mark()).
  void note_not_yet_alone() noexcept { note_turn_alone(short_of_mark); }
  // What the notes since the last call say (the governor's, at each epoch's
  // end), and clears them.
  governor::sharing take_sharing() noexcept;
  // How many epochs the governor has weighed so far (see adapt_when_due).
  std::uint64_t epochs_weighed() const noexcept {
    return adaptation_.weighed.load(std::memory_order_relaxed);
  }
  std::uint32_t covering(std::uint32_t worker) const noexcept {
    const std::uint32_t active = active_workers();
    return worker < active ? worker : worker % active;
  }
  // Calls f(first, last) for the ownership blocks that worker `worker`
  // sweeps besides its own while `active` workers run: none if it rests
  // itself (it may not know yet), or is not a pool worker.
  template <class F>
  void for_each_covered(std::uint32_t worker, std::uint32_t active, F&& f) const {
    if (worker >= active) return;
    for (std::uint32_t w = worker + active; w < worker_count_; w += active) {
      const runner::block b = workers_[w].owned();
      f(b.first, b.last);
    }
  }
  // Parking: registers `w` as the waiter of every queue in the blocks that
  // worker `worker` covers, as runner::register_as_waiter does for its
  // own; false if one has mail or is mid-swap.
  bool register_covered(std::uint32_t worker, sleeper* w) noexcept;
  // Wakes the worker that sweeps resting worker `worker`'s queues: a wake
  // meant for the resting one (a thief gave it a queue, or mail came to a
  // queue it registered on before it rested) is passed on.
  void wake_covering(std::uint32_t worker) noexcept;
  bool others_rest() const noexcept;
  // The new count (see set_active).
  void change_active(std::uint32_t active) noexcept;
  // Called by running pool workers now and then (see
  // pool_worker::rescue_when_due): once per adapt_every, by whichever
  // comes first, the governor weighs the epoch just ended and the count of
  // running workers changes if it says so.
  void adapt_when_due(std::chrono::steady_clock::time_point now) noexcept;
  // Runs workers 0 .. active - 1 from now on, the others rest, as if the
  // governor had decided it (for tests, with epochs too long for it to
  // decide meanwhile). @pre 1 <= active <= worker_count(), and the
  // governor is on (system_config::adapt_every).
  void set_active(std::uint32_t active) noexcept;

  // Drops what is queued in queue `index` (a sponsor's, released), handing
  // it to the actor models' discard handlers; returns how many envelopes.
  std::uint32_t discard(std::uint32_t index) noexcept;

 private:
  // The bits of adaptation::waiting (see note_waiting).
  static constexpr std::uint8_t saw_one_at_most = 1;
  static constexpr std::uint8_t saw_two = 2;
  static constexpr std::uint8_t short_of_mark = 4;
  void note_turn_alone(std::uint8_t bit) noexcept {
    std::atomic<std::uint8_t>& seen = adaptation_.waiting;
    if ((seen.load(std::memory_order_relaxed) & bit) == 0)
      seen.fetch_or(bit, std::memory_order_relaxed);
  }
  // Counters for threads that run no runner: shared, so atomic RMW.
  struct foreign_counters {
    std::atomic<std::uint64_t> created{0};
    std::atomic<std::uint64_t> sent{0};
    std::array<std::atomic<std::uint64_t>, tally_count> tallies{};  // see count()
    std::atomic<std::uint64_t> discarded{0};                        // only by stop() and discard()
    std::atomic<std::uint64_t> unsent_messages{0};
    std::atomic<std::uint64_t> memory_waits{0};
    std::atomic<std::uint32_t> ticket{0};
    std::atomic<std::uint32_t> placed{0};  // see queue_on_worker

    std::atomic<std::uint64_t>& of(tally what) noexcept {
      return tallies[static_cast<std::size_t>(what)];
    }
    std::uint64_t of(tally what) const noexcept {
      return tallies[static_cast<std::size_t>(what)].load(std::memory_order_relaxed);
    }
  };
  void discard_late(std::uint32_t queue) noexcept;
  void start_worker(std::uint32_t index);
  void refuse_from_runner(const char* what) const;
  // Classic actors created and neither finished nor destroyed since; the
  // live ones are those of them that no sponsor abandoned.
  std::uint64_t unfinished_actors() const noexcept;
  std::uint64_t live_actors() const noexcept;
  template <class F>
  void for_each_worker(F&& f) const;
  template <class F>
  void for_each_runner(F&& f) const;
  // One statistic summed over every runner (no allocation).
  std::uint64_t sum(counter worker_counters::*field) const noexcept;
  void wait_until_finished();
  void join_workers() noexcept;
  // With checks on, once stopped and about to be destroyed: aborts
  // (lifetime_violated) if the program still holds what would reach this
  // executor later, a sponsor or a classic actor that has not finished.
  void refuse_to_be_outlived() const noexcept;

  const system_config config_;
  actor_system& owner_;
  const std::uint32_t worker_count_;
  const std::uint32_t queue_count_;
  const placement placement_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<bool> unbound_reported_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> postponed_{false};
  std::atomic<bool> stopped_{false};
  // Set by stop() once the workers are joined, before it discards what is
  // left in the queues: a post from another thread that finds it set
  // discards its queue itself (see post_to_mailbox).
  std::atomic<bool> discarding_{false};
  epochs epochs_;  // before the runners, which hold a reference
  quiescence quiescence_;
  // The master array: the workers' queues, then one per sponsor.
  fixed_array<padded<work_queue>> queues_;
  fixed_array<atomic<work_queue*>> ownership_;  // the thesis's worker_queues
  fixed_array<std::atomic<std::uint32_t>> slot_of_;  // per queue, see slot_hint()
  fixed_array<padded<pool_worker>> workers_;    // none for a deterministic executor
  lending lending_;
  std::unique_ptr<stepper> stepper_;
  std::atomic<std::int32_t> promised_posts_{0};
  // Read by every worker at every send it may hold (runner::hold_send),
  // written only when a worker goes idle or back to work.
  padded<std::atomic<std::uint32_t>> idle_workers_{0u};
  // Read at every send to a parallel transactional actor from a worker
  // (runner::hungry_queue), written once or twice per hungry spell.
  padded<std::atomic<std::uint32_t>> hungry_workers_{0u};
  postponed_work postponed_work_{};
  // Read at every sweep, written only when the count changes.
  padded<std::atomic<std::uint32_t>> active_;
  // The governor's turn (see adapt_when_due): `due` is read by running
  // workers every few sweeps; the rest only by the turn's holder.
  struct adaptation {
    adaptation(std::uint32_t workers, std::chrono::nanoseconds epoch) noexcept
        : decide{workers, epoch} {}
    // On the epochs' clock: steady_clock nanoseconds less the idle spells
    // that have ended (see adapt_when_due).
    std::atomic<std::int64_t> due{0};  // max: never
    std::atomic<bool> turn{false};
    // Epochs weighed: written by the turn's holder, read by worker 0 at a
    // batch's start when it may run alone (see past_mark()).
    std::atomic<std::uint64_t> weighed{0};
    std::atomic<bool> by_hand{false};  // set_active was called
    // What turns run alone found waiting this epoch (see note_waiting).
    std::atomic<std::uint8_t> waiting{0};
    governor decide;
    std::int64_t since = 0;  // the epoch's start, on the epochs' clock
    std::uint64_t work = 0;  // messages run and sent, up to `since`
  };
  padded<adaptation> adaptation_;
  std::vector<std::thread> threads_;
  padded<foreign_counters> foreign_;
  std::mutex stop_mutex_;
  // With checks on: the next in the process's list of live executors
  // (see live()), guarded by that list's lock.
  executor* next_live_ = nullptr;
};

}  // namespace tact::detail
