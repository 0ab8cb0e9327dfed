#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "executor/runner.hpp"
#include "support/fixed_array.hpp"
#include "support/padded.hpp"

namespace tact::detail {

// A thread lent to the executor by a caller waiting for an answer (an ask
// from outside the actor world, see helpers/ask): while it waits, it runs
// one batch after another of any queue that has mail, as this runner.
// Guests own no queues; they gulp as owners do, so being_processed keeps
// every classic actor to one message at a time. A behaviour a guest runs
// may wait, like one a pool worker runs: the lender then stays this
// guest until that behaviour is done.
class guest : public runner {
 public:
  guest(executor& owner, std::uint32_t index);

  // On the lender's thread: runs one batch of any queue with mail, or
  // resumes a behaviour of this guest whose wait is over; false if it
  // found nothing. A pass counts as busy for quiescence, and stays open
  // while behaviours it ran wait. With a limit (the lender's own ask),
  // the batch is cut short once the limit is reached (see
  // runner::process).
  bool help(const help_limit* limit = nullptr);

 private:
  friend class lending;
  static void fiber_loop(runner& self);

  std::uint32_t next_ = 0;  // where the next pass starts, so guests spread over the queues
  bool open_pass_ = false;
  std::atomic<bool> taken_{false};
};

// How much one run of a sponsor may do: messages, and time (checked
// between messages).
struct run_budget {
  std::uint64_t messages = ~std::uint64_t{0};
  std::optional<std::chrono::steady_clock::time_point> deadline{};
};

// A sponsor's runner: runs, on the sponsor's thread, the one queue whose
// actors are bound to the sponsor (see tact::sponsor). Workers and guests
// never look at that queue. Its behaviours never suspend: the sponsor's
// thread belongs to the program, and an ask there sleeps on its answer.
class sponsor_runner : public runner {
 public:
  sponsor_runner(executor& owner, std::uint32_t index, std::uint32_t queue);

  std::uint32_t queue() const noexcept { return queue_; }
  // A send found the sponsor idle: tells the sponsor (notify(context)).
  // Nobody to tell once the sponsor is gone (a send to its actors then
  // breaks the rule for destroying a sponsor, see tact::sponsor). A driven
  // sponsor's mail is queued work until the sponsor has run it: the
  // system is not quiescent meanwhile (see run_sponsor).
  void wake() noexcept override;

 private:
  friend class lending;
  // On the sponsor's thread: runs batches of the queue until it is empty,
  // then registers as its waiter, so that the next send wakes the sponsor;
  // or until `budget` is spent with mail left (`left`), registering not.
  struct drained {
    std::uint64_t ran;
    bool left;
  };
  drained drain(const run_budget& budget);

  const std::uint32_t queue_;
  void (*notify_)(void*) noexcept = nullptr;
  void* context_ = nullptr;
  // Run by a thread of its own or an event loop, without the program
  // asking: its mail counts toward quiescence from the wake-up on.
  bool driven_ = false;
  // A wake-up opened a pass for quiescence that the next run closes.
  std::atomic<bool> owes_pass_{false};
  std::atomic<bool> taken_{false};
  // Classic actors bound to this runner's queue that have not finished.
  // Any thread: actors are made and destroyed anywhere. Only a sponsor
  // that holds the runner binds to it, so once it is not taken the count
  // can only fall: take_sponsor's read of zero stays true.
  std::atomic<std::int64_t> bound_{0};
};

// The threads an executor borrows: guests for askers (as many as there
// are workers) and runners for sponsors (system_config::sponsors). stop() waits
// for every lent thread to come back before it discards what is queued.
class lending {
 public:
  // Guests take runner indices from `first_index` on, then the sponsors'
  // runners; sponsor k runs queue first_sponsor_queue + k.
  lending(executor& owner, std::uint32_t first_index, std::uint32_t guests,
          std::uint32_t first_sponsor_queue, std::uint32_t sponsors);

  // ---- guests ----

  // A guest for the calling thread, if the thread runs as no runner, a
  // guest is free and the system is not stopping; else nullptr. Until
  // release_guest, the thread is that guest: this_thread_runner names it.
  // A caller that finds none free simply does not help.
  guest* take_guest() noexcept;
  // @pre the guest is not busy (no behaviour it ran still waits).
  void release_guest(guest& g) noexcept;

  // ---- sponsors ----

  // A free sponsor runner, whose wake() calls `notify(context)`; `driven`:
  // the sponsor runs by itself once notified (a thread, an event loop).
  // std::runtime_error when every one is taken.
  sponsor_runner& take_sponsor(void (*notify)(void*) noexcept, void* context, bool driven);
  // What a sponsor left behind when it was released.
  struct leftovers {
    std::uint32_t messages;  // still queued: dropped, as at stop()
    std::int64_t actors;     // bound to it and not finished: abandoned
  };
  // The runner is given up. Its abandoned actors, if any, keep it out of
  // use until they are destroyed, so that no later sponsor runs them; the
  // runner is free again once none is left.
  leftovers release_sponsor(sponsor_runner& r) noexcept;
  // A classic actor bound to sponsor queue `queue` was made, or finished
  // (or was destroyed before it finished). Any thread.
  void bind(std::uint32_t queue) noexcept { runner_of(queue).bound_.fetch_add(1); }
  void unbind(std::uint32_t queue) noexcept { runner_of(queue).bound_.fetch_sub(1); }
  // Whether `queue` is a sponsor's (unsigned: a queue below the first
  // sponsor's wraps to a large difference).
  bool sponsored(std::uint32_t queue) const noexcept {
    return queue - first_sponsor_queue_ < sponsors_.size();
  }
  // Actors bound to sponsors that are gone: nobody can run them, so stop()
  // does not wait for them.
  std::uint64_t abandoned() const noexcept;
  // Sponsors holding a runner now: sponsor objects not yet destroyed.
  std::uint32_t sponsors_held() const noexcept;
  // On the sponsor's thread, which must run as no runner (std::logic_error):
  // runs the sponsor's queue until it is empty, or until `budget` is spent
  // (at least one message runs), counting as a guest pass for quiescence.
  // A run that stops at its budget with mail left tells the sponsor, as a
  // send to an idle sponsor does, so that it is run again. Returns the
  // messages run; 0 at once once the system is stopping.
  std::uint64_t run_sponsor(sponsor_runner& r, const run_budget& budget = {});

  // ---- stop ----

  // After the executor started stopping: returns once every lent thread
  // is back (each finishes the batch in hand and takes no more).
  void await_returned() const noexcept;

  template <class F>
  void for_each_runner(F&& f) const {
    for (const guest& g : guests_) f(static_cast<const runner&>(g));
    for (const sponsor_runner& s : sponsors_) f(static_cast<const runner&>(s));
  }

 private:
  bool lend() noexcept;
  sponsor_runner& runner_of(std::uint32_t queue) noexcept {
    return sponsors_[queue - first_sponsor_queue_];
  }
  void give_back() noexcept { lent_threads_.fetch_sub(1, std::memory_order_seq_cst); }

  executor& owner_;
  const std::uint32_t first_sponsor_queue_;
  fixed_array<padded<guest>> guests_;
  fixed_array<padded<sponsor_runner>> sponsors_;
  std::atomic<std::uint32_t> lent_threads_{0};  // guests taken and sponsors running
};

}  // namespace tact::detail
