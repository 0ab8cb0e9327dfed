#include "executor/worker.hpp"

#include <thread>

#include "executor/executor.hpp"
#include "support/cpu_relax.hpp"
#include "support/futex.hpp"

namespace tact::detail {

constinit thread_local worker* this_thread_worker = nullptr;

worker::worker(executor& owner, std::uint32_t first_slot, std::uint32_t last_slot) noexcept
    : owner_{owner},
      first_slot_{first_slot},
      last_slot_{last_slot},
      local_batch_{owner.config().local_batch},
      ticket_{first_slot} {}

void worker::run() {
  this_thread_worker = this;
  const std::uint64_t spins = owner_.config().idle_spins;
  const std::uint64_t park_after = spins + owner_.config().idle_yields;
  std::uint64_t idle_sweeps = 0;
  while (!owner_.stopping()) {
    if (sweep()) {
      idle_sweeps = 0;
    } else if (++idle_sweeps <= spins) {
      cpu_relax();
    } else if (idle_sweeps <= park_after) {
      std::this_thread::yield();
    } else {
      park();
      idle_sweeps = 0;
    }
  }
  this_thread_worker = nullptr;
}

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

void worker::process(work_queue& q) {
  copy_queue& batch = q.batch();
  counters.gulps.add();
  counters.gulped_messages.add(batch.size());
  current_ = &q;
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
    run(target, message);
    ++processed;
  }
  current_ = nullptr;
  const std::uint32_t appended = local_batch_ - budget_;
  counters.local_sends.add(appended);
  counters.messages_sent.add(appended);
  counters.messages_processed.add(processed);
  q.finish();
}

std::uint32_t worker::next_ticket() noexcept {
  const std::uint32_t ticket = ticket_;
  ticket_ = ticket + 1 == owner_.queue_count() ? 0 : ticket + 1;
  return ticket;
}

// Parking protocol (no lost wake-up):
//  1. state := parking.
//  2. Register as the waiter of every owned queue, each under that queue's
//     lock, giving up if one has mail. A post to a queue either precedes
//     its registration (we see the mail and give up) or follows it (the
//     poster takes us as the queue's waiter and calls wake()).
//  3. parking -> parked by CAS. wake() swaps in `running`; if it got there
//     first the CAS fails and we sweep again, otherwise wake() sees
//     `parked` and notifies the futex we sleep on.
// A registration left behind by a give-up only causes one spurious wake().
void worker::park() {
  state_.store(parking, std::memory_order_seq_cst);
  for (std::uint32_t slot = first_slot_; slot < last_slot_; ++slot) {
    if (!owner_.owned_queue(slot).register_waiter(this)) {
      state_.store(running, std::memory_order_relaxed);
      return;
    }
  }
  // stop() sets `stopping` and then wakes every worker: either we see the
  // flag here, or its wake() comes after our store of `parking`.
  if (owner_.stopping()) {
    state_.store(running, std::memory_order_relaxed);
    return;
  }
  std::uint32_t expected = parking;
  if (!state_.compare_exchange_strong(expected, parked, std::memory_order_seq_cst)) return;
  counters.parks.add();
  owner_.on_parked();
  while (state_.load(std::memory_order_acquire) == parked) futex_wait(state_, parked);
  counters.wakeups.add();
}

void worker::wake() noexcept {
  // An unconditional exchange: it reads the latest state, so it cannot miss
  // a park that is committing concurrently.
  if (state_.exchange(running, std::memory_order_seq_cst) == parked) {
    owner_.on_unparked();
    futex_wake_one(state_);
  }
}

}  // namespace tact::detail
