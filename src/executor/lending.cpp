#include "executor/lending.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include <tact/defaults.hpp>

#include "executor/executor.hpp"

namespace tact::detail {

guest::guest(executor& owner, std::uint32_t index)
    : runner{owner, index, block{}, &guest::fiber_loop} {}

// A guest's fibers run this while the lender's own context is suspended in
// a behaviour: the lender goes on helping; once its context waits at loop
// level again the loop goes back to it (see runner::fiber_turn).
void guest::fiber_loop(runner& self) {
  auto& g = static_cast<guest&>(self);
  while (g.fiber_turn())
    if (!g.help()) g.wait();
}

// A pass stays open (the guest counts as busy for quiescence) for as long
// as behaviours it ran are suspended: the system is not quiescent while
// they wait.
bool guest::help(const help_limit* limit) {
  if (!open_pass_) {
    owner().quiet().pass_begins();
    open_pass_ = true;
  }
  bool worked = false;
  if (busy()) [[unlikely]] {
    // A resumed behaviour is this pass's work; the context that ran it
    // comes back here when it is needed again (or must end).
    worked = resume_ready() || drain_all_held() > 0;
  }
  // No new batch once the lender has had enough.
  const std::uint32_t queues =
      limit != nullptr && limit->reached() ? 0 : owner().queue_count();
  for (std::uint32_t i = 0; i < queues && !worked; ++i) {
    const std::uint32_t index = next_;
    next_ = next_ + 1 == queues ? 0 : next_ + 1;
    work_queue& q = owner().queue_at(index);
    if (!q.looks_empty() && q.gulp() == work_queue::gulp_result::taken) {
      if (limit != nullptr)
        process(q, index, *limit);
      else
        process(q, index);
      worked = true;
    }
  }
  if (open_pass_ && !busy()) {
    open_pass_ = false;
    owner().quiet().pass_ends();
  }
  return worked;
}

sponsor_runner::sponsor_runner(executor& owner, std::uint32_t index, std::uint32_t queue)
    : runner{owner, index, block{}, nullptr}, queue_{queue} {}

// The pass begins before it is owed, so a run that takes it over ends a
// pass that was counted.
void sponsor_runner::wake() noexcept {
  if (notify_ == nullptr) return;
  if (driven_) {
    owner().quiet().pass_begins();
    owes_pass_.store(true);
  }
  notify_(context_);
}

sponsor_runner::drained sponsor_runner::drain(const run_budget& budget) {
  work_queue& q = owner().queue_at(queue_);
  const std::uint64_t most = std::max<std::uint64_t>(budget.messages, 1);
  std::uint64_t ran = 0;
  for (;;) {
    if (ran > 0 && (ran >= most ||
                    (budget.deadline && std::chrono::steady_clock::now() >= *budget.deadline))) {
      // Spent. Whether mail is left is settled under the queue's lock, as
      // when the queue runs dry: none, and a send after this sees us
      // registered.
      return {ran, !q.register_waiter(this, nullptr)};
    }
    switch (q.gulp()) {
      case work_queue::gulp_result::taken:
        ran += budget.deadline ? process_at_most(q, queue_, most - ran, *budget.deadline)
                               : process_at_most(q, queue_, most - ran);
        break;
      case work_queue::gulp_result::empty:
        // Under the queue's lock: a send either came before (we go round
        // again) or comes after and finds us registered.
        if (q.register_waiter(this, nullptr)) return {ran, false};
        break;
      case work_queue::gulp_result::busy:
        // Another thread is running this sponsor (the program called it
        // from two threads): that one finishes the work.
        return {ran, false};
    }
  }
}

lending::lending(executor& owner, std::uint32_t first_index, std::uint32_t guests,
                 std::uint32_t first_sponsor_queue, std::uint32_t sponsors)
    : owner_{owner},
      first_sponsor_queue_{first_sponsor_queue},
      guests_{guests,
              [&](std::size_t g) {
                return padded<guest>{owner, first_index + static_cast<std::uint32_t>(g)};
              }},
      sponsors_{
          sponsors, [&](std::size_t k) {
            const auto i = static_cast<std::uint32_t>(k);
            return padded<sponsor_runner>{owner, first_index + guests + i, first_sponsor_queue + i};
          }} {}

// Counted before stopping is read, and stop() sets stopping before it
// waits for the count to drop (both sequentially consistent): either we
// see it stopping, or it waits for us.
bool lending::lend() noexcept {
  lent_threads_.fetch_add(1, std::memory_order_seq_cst);
  if (!owner_.stopping()) return true;
  give_back();
  return false;
}

guest* lending::take_guest() noexcept {
  if (this_thread_runner != nullptr || owner_.stepping() != nullptr || !lend()) return nullptr;
  for (guest& g : guests_)
    if (!g.taken_.load(std::memory_order_relaxed) &&
        !g.taken_.exchange(true, std::memory_order_acquire)) {
      g.enter();
      return &g;
    }
  give_back();
  return nullptr;
}

void lending::release_guest(guest& g) noexcept {
  TACT_ASSERT(!g.busy(), "a guest is released only once no behaviour it ran waits");
  g.leave();
  // Release: the next lender of this guest sees its state as we left it.
  g.taken_.store(false, std::memory_order_release);
  give_back();
}

sponsor_runner& lending::take_sponsor(void (*notify)(void*) noexcept, void* context,
                                      bool driven) {
  if (owner_.stepping() != nullptr)
    throw std::logic_error{
        "tact: sponsors run actors on threads of their own, which a deterministic system does not "
        "have"};
  for (sponsor_runner& r : sponsors_)
    if (!r.taken_.load(std::memory_order_relaxed) && r.bound_.load() == 0 &&
        !r.taken_.exchange(true, std::memory_order_acquire)) {
      r.notify_ = notify;
      r.context_ = context;
      r.driven_ = driven;
      // So that the first send to the new sponsor's actors notifies it.
      owner_.queue_at(r.queue()).register_waiter(&r, nullptr);
      return r;
    }
  throw std::runtime_error{"tact: a system has at most " + std::to_string(sponsors_.size()) +
                           " sponsors at once"};
}

lending::leftovers lending::release_sponsor(sponsor_runner& r) noexcept {
  const std::uint32_t messages = owner_.discard(r.queue());
  if (r.owes_pass_.exchange(false)) owner_.quiet().pass_ends();  // nothing left to run
  r.notify_ = nullptr;
  r.context_ = nullptr;
  // Release: the next sponsor on this runner sees it as we left it.
  r.taken_.store(false, std::memory_order_release);
  return {messages, r.bound_.load()};
}

// A runner that is not taken runs nothing: what is bound to it now is
// abandoned (take_sponsor leaves such a runner alone until it is zero).
std::uint64_t lending::abandoned() const noexcept {
  std::int64_t n = 0;
  for (const sponsor_runner& r : sponsors_)
    if (!r.taken_.load(std::memory_order_acquire)) n += r.bound_.load();
  return n > 0 ? static_cast<std::uint64_t>(n) : 0;
}

std::uint32_t lending::sponsors_held() const noexcept {
  std::uint32_t n = 0;
  for (const sponsor_runner& r : sponsors_)
    if (r.taken_.load(std::memory_order_acquire)) ++n;
  return n;
}

std::uint64_t lending::run_sponsor(sponsor_runner& r, const run_budget& budget) {
  if (this_thread_runner != nullptr)
    throw std::logic_error{
        "tact: a sponsor was run from a behaviour; run it from its own thread (a worker "
        "cannot lend itself)"};
  if (!lend()) return 0;
  r.enter();
  owner_.quiet().pass_begins();
  // Ours covers the pass a wake-up opened: the mail it announced is in
  // the queue we drain, and the next wake-up needs the waiter that only
  // this drain registers again, so none can come in between.
  if (r.owes_pass_.exchange(false)) owner_.quiet().pass_ends();
  // Nothing to unwind: a batch runs only noexcept trampolines.
  const sponsor_runner::drained d = r.drain(budget);
  // Mail left at the budget is announced as a send to an idle sponsor
  // would: a driven sponsor's pass stays open until its next run, which
  // takes it over. Ours is that pass, unless a wake-up during this run
  // owes one already (a registration made before the run, taken by a
  // send since): the drain registered nothing, so no other wake-up can
  // come before the next run.
  const bool pass_handed_over = d.left && r.driven_ && !r.owes_pass_.exchange(true);
  if (!pass_handed_over) owner_.quiet().pass_ends();
  r.leave();
  give_back();
  if (d.left && r.notify_ != nullptr) r.notify_(r.context_);
  return d.ran;
}

void lending::await_returned() const noexcept {
  while (lent_threads_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

}  // namespace tact::detail
