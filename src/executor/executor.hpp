#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tact/config.hpp>
#include <tact/detail/atomic.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/diagnostic.hpp>
#include <tact/export.hpp>
#include <tact/stats.hpp>

#include "executor/epochs.hpp"
#include "executor/placement.hpp"
#include "executor/stepper.hpp"
#include "executor/worker.hpp"
#include "mailbox/work_queue.hpp"
#include "support/fixed_array.hpp"
#include "support/padded.hpp"

namespace tact {
class actor_system;
}

namespace tact::detail {

// The executor behind a system (for the actor models).
TACT_API executor& executor_of(actor_system& system) noexcept;

// The message-centric executor (Cforall thesis): M work queues in a master array
// (senders post by queue index), and the ownership array of M pointers in
// which each of the N workers owns a contiguous block. A worker only ever
// reaches its queues through the ownership array, so work stealing can move
// a queue between workers by swapping two pointers there.
//
// The actor models see two things: admit() (a queue for a new actor) and
// post() (an envelope to a queue). Everything else is lifecycle.
class executor {
 public:
  // Validates the configuration (std::invalid_argument) and starts workers,
  // placed as `place(worker count)` says (by default: anywhere). With a
  // `plan`, starts no thread: the one worker runs on whichever thread
  // drives stepping() (the deterministic executor; config.workers must be
  // 1).
  executor(const system_config& config, actor_system& owner,
           const std::function<placement(std::uint32_t workers)>& place = {},
           const step_plan* plan = nullptr);
  ~executor();
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  // ---- queries ----
  const system_config& config() const noexcept { return config_; }
  actor_system& owner() const noexcept { return owner_; }
  std::uint32_t worker_count() const noexcept { return worker_count_; }
  std::uint32_t queue_count() const noexcept { return queue_count_; }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_seq_cst); }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
  // Whether idle workers steal queues (a policy other than none, and
  // someone to steal from).
  bool stealing() const noexcept {
    return config_.steal != steal_policy::none && worker_count_ > 1;
  }
  system_stats stats() const;
  // The deterministic executor's driver, or nullptr for a threaded one.
  stepper* stepping() const noexcept { return stepper_.get(); }

  // The worker of this executor running on the calling thread, or nullptr.
  worker* this_worker() const noexcept {
    worker* w = this_thread_worker;
    return w != nullptr && &w->owner() == this ? w : nullptr;
  }

  // The executor actors join by default on this thread (see actor::actor()):
  // an ambient_scope's, else the running worker's, else the process
  // default. nullptr if none.
  static executor* ambient() noexcept;
  // The scope, and the queue that actors created in it take (a sponsor's;
  // worker::no_queue: round robin).
  static void set_scope(executor* scope, std::uint32_t home) noexcept;
  static executor* scope() noexcept;
  static std::uint32_t scope_home() noexcept;
  // The queue the scope on this thread gives this executor's new actors,
  // or worker::no_queue.
  std::uint32_t home_in_scope() const noexcept;

  // ---- for actor models; safe from any thread ----

  // A new actor: counts it alive and returns its queue (round robin).
  // std::logic_error once the system is stopping.
  std::uint32_t admit();
  void count_finished() noexcept;
  void count_dead_letter() noexcept;
  // A send refused before it was queued (see worker_stats::messages_rejected).
  void count_rejected() noexcept;

  // A queue for a message sent from a thread that is not one of our
  // workers, or for an actor that needs a home queue without counting as a
  // live classic actor: round robin over all queues.
  std::uint32_t next_queue() noexcept {
    return foreign_.ticket.fetch_add(1, std::memory_order_relaxed) % queue_count_;
  }

  // A transactional send to an empty reference.
  void count_tx_dropped() noexcept;

  // Deferred reclamation for pointers workers read without counting
  // references; participants are the workers, by index.
  epochs& reclamation() noexcept { return epochs_; }

  // Queued envelopes whose run function is `run` are passed to `drop`
  // instead of being ignored when stop() discards what is left, so an actor
  // model can free what they own. Register before the first such post.
  static void on_discard(run_fn run, void (*drop)(const envelope&) noexcept) noexcept;

  // Appends the envelope {target, message, run} to queue `queue` and wakes
  // its worker if it was parked. The same-queue append is the fast path;
  // everything else is out of line, so the fast path saves no registers.
  // The three words stay in registers until they are stored into a queue:
  // an envelope built on the stack and read back as one wider load would
  // stall on store forwarding.
  void post(std::uint32_t queue, void* target, void* message, run_fn run) {
    post(this_worker(), queue, target, message, run);
  }
  // The same, for a caller that knows which of this executor's workers it
  // runs on (self), or that it runs on none (nullptr).
  void post(worker* self, std::uint32_t queue, void* target, void* message, run_fn run) {
    if (self != nullptr && self->try_append(queues_[queue], target, message, run)) return;
    post_to_mailbox(self, queue, target, message, run);
  }

  // Hands a diagnostic to the configured handler.
  void report(diagnostic_kind kind, std::string text, std::exception_ptr error = {}) const noexcept;

  // A message was destroyed without being sent (checks): the first is
  // reported at once, the rest counted and summed up by stop(), so a
  // program that does this in a loop is told once, not flooded.
  void note_unsent_message() noexcept;

  // ---- lending a thread (see worker::help) ----

  // A guest worker for the calling thread, if the thread is no worker, a
  // guest is free and the system is not stopping; else nullptr. Until
  // release_guest, the thread is that worker: this_worker() returns it and
  // guest->help() runs queued work on it. There are as many guests as
  // workers; a caller that finds none free simply does not help.
  worker* take_guest() noexcept;
  // Only once the guest is not busy (no behaviour it ran still waits).
  void release_guest(worker* guest) noexcept;
  // A guest starts and ends a pass over the queues: quiescence waits for
  // passes in progress (a guest may be running a batch while every worker
  // is parked).
  void on_guest_busy() noexcept { busy_guests_.fetch_add(1, std::memory_order_seq_cst); }
  void on_guest_idle() noexcept;
  work_queue& queue_at(std::uint32_t index) noexcept { return queues_[index]; }
  // ---- sponsors (threads outside the pool that run chosen actors) ----
  // A free sponsor slot: the worker its sponsor runs as, whose wake()
  // calls `notify(context)`, and which alone processes its queue
  // (sponsor_queue): workers and guests never look at it.
  // std::runtime_error when all defaults::sponsors slots are taken.
  worker& take_sponsor(void (*notify)(void*) noexcept, void* context);
  // The slot is free again. Returns how many messages were still queued
  // (dropped, as at stop()).
  std::uint32_t release_sponsor(worker& runner) noexcept;
  std::uint32_t sponsor_queue(const worker& runner) const noexcept {
    return queue_count_ + (runner.index() - 2 * worker_count_);
  }
  // On the sponsor's thread, which must not be a worker (std::logic_error):
  // runs the sponsor's queue until it is empty (worker::drain), counting
  // as a guest pass for quiescence. Returns the messages run; 0 at once
  // once the system is stopping.
  std::uint64_t run_sponsor(worker& runner);

  // Sends promised by something outside the workers (one per armed
  // timer): while any is outstanding, stop() does not report idle live
  // actors as waiting for a send that cannot come.
  void promise_posts(std::int32_t change) noexcept {
    promised_posts_.fetch_add(change, std::memory_order_relaxed);
  }
  // ---- lifecycle (not from a worker: std::logic_error) ----
  void await_quiescence();
  // `before_join` runs once every actor has finished, while workers still
  // take messages: for what must stop posting first (the timer thread).
  void stop(const std::function<void()>& before_join = {});

  // ---- for workers ----

  // The ownership array's slot (the thesis's worker_queues[slot]); null while a
  // thief swaps it (see try_swap).
  atomic<work_queue*>& slot(std::uint32_t slot) noexcept { return ownership_[slot]; }
  // A worker's own slot, which only it could have nulled: never null.
  work_queue& owned_queue(std::uint32_t slot) noexcept {
    return *ownership_[slot].load(std::memory_order_relaxed);
  }
  worker& worker_at(std::uint32_t index) noexcept { return workers_[index]; }
  std::uint32_t index_of(const work_queue& q) const noexcept {
    return static_cast<std::uint32_t>(static_cast<const padded<work_queue>*>(&q) - queues_.begin());
  }

  void on_parked() noexcept;
  void on_unparked() noexcept { parked_.fetch_sub(1, std::memory_order_seq_cst); }
  bool all_parked() const noexcept {
    return parked_.load(std::memory_order_seq_cst) == worker_count_;
  }
  // No worker running and no guest pass in progress.
  bool quiescent() const noexcept {
    return all_parked() && busy_guests_.load(std::memory_order_seq_cst) == 0;
  }
  // Called by a worker that has just stopped being parked, with stealing
  // on: if no parked worker is watching for stranded queues, wakes one
  // that sleeps (see worker::watch).
  void keep_watch() noexcept;

 private:
  // Counters for threads that are not workers: shared, so atomic RMW.
  struct foreign_counters {
    std::atomic<std::uint64_t> created{0};
    std::atomic<std::uint64_t> finished{0};
    std::atomic<std::uint64_t> sent{0};
    std::atomic<std::uint64_t> dead_letters{0};
    std::atomic<std::uint64_t> tx_dropped{0};
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<std::uint64_t> discarded{0};  // only by stop() and release_sponsor()
    std::atomic<std::uint64_t> unsent_messages{0};
    std::atomic<std::uint32_t> ticket{0};
  };


  [[gnu::noinline]] void post_to_mailbox(worker* self, std::uint32_t queue, void* target,
                                         void* message, run_fn run);
  void discard_late(std::uint32_t queue) noexcept;
  void start_worker(std::uint32_t index);
  void refuse_from_worker(const char* what) const;
  void await_epoch_change(std::uint32_t seen) noexcept;
  void advance_epoch() noexcept;
  std::uint64_t live_actors() const noexcept;
  // One statistic summed over workers and guests (no allocation).
  std::uint64_t sum(counter worker_counters::*field) const noexcept;
  void wait_until_finished();
  void join_workers() noexcept;

  const system_config config_;
  actor_system& owner_;
  const std::uint32_t worker_count_;
  const std::uint32_t queue_count_;
  const placement placement_;
  std::atomic<bool> unbound_reported_{false};
  fixed_array<padded<work_queue>> queues_;           // master array
  fixed_array<atomic<work_queue*>> ownership_;       // the thesis's worker_queues
  fixed_array<padded<worker>> workers_;
  // Guests (indices worker_count_ and up), then sponsors' runners (indices
  // 2 * worker_count_ and up), whose queues follow the queue_count_ that
  // workers own.
  fixed_array<padded<worker>> guests_;
  fixed_array<std::atomic<bool>> guest_taken_;
  fixed_array<std::atomic<bool>> sponsor_taken_;
  std::atomic<std::uint32_t> lent_threads_{0};    // guests taken (stop waits for 0)
  std::atomic<std::uint32_t> busy_guests_{0};
  std::atomic<std::int32_t> promised_posts_{0};
  std::vector<std::thread> threads_;
  padded<foreign_counters> foreign_;
  epochs epochs_;

  // Quiescence: parked_ counts workers parked; when it reaches N the epoch
  // advances and waiters (await_quiescence, stop) re-check.
  std::atomic<std::uint32_t> parked_{0};
  std::atomic<std::uint32_t> quiescent_epoch_{0};
  std::atomic<std::uint32_t> epoch_waiters_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stopped_{false};
  // Set by stop() once the workers are joined, before it discards what is
  // left in the queues: a post from another thread that finds it set
  // discards its queue itself (see post_to_mailbox).
  std::atomic<bool> discarding_{false};
  std::mutex stop_mutex_;
  std::unique_ptr<stepper> stepper_;
};

}  // namespace tact::detail
