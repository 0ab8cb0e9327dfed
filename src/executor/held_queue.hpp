#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <tact/detail/envelope.hpp>

#include "mailbox/copy_queue.hpp"
#include "mailbox/work_queue.hpp"
#include "support/assert.hpp"
#include "support/reserve.hpp"

namespace tact::detail {

// A work queue whose batch was handed over when a behaviour of one of its
// actors suspended (see runner::suspend). It stays being_processed, so no
// other thread gulps it, and the runner holding it keeps running it: the
// rest of the batch, moved into `batch` here (which leaves the queue's own
// batch empty, so the suspended process() loop ends by itself once its
// behaviour returns), then mail taken in with regulp(). Actors with a
// suspended behaviour are busy: their messages found meanwhile wait in
// their stash, in order, and run once the behaviour has finished, before
// anything later for them. That keeps each actor to one message at a time
// and per-sender FIFO, while the queue's other actors (an asked actor
// among them) go on. Only the holding runner's thread touches it; a runner
// keeps released ones for reuse, chunks included.
struct held_queue {
  struct busy_actor {
    void* target;                 // as in its envelopes
    std::vector<envelope> stash;  // its messages that came while busy, from `next` on
    std::size_t next = 0;

    bool idle() const noexcept { return next == stash.size(); }
    envelope take() noexcept {
      const envelope e = stash[next++];
      if (next == stash.size()) {
        stash.clear();
        next = 0;
      }
      return e;
    }
  };

  explicit held_queue(std::uint32_t floor) noexcept : batch{floor} {}

  work_queue* queue = nullptr;
  std::uint32_t index = 0;
  // Queues held along with `queue`: those a batch kept or claimed when a
  // behaviour of it that had merged kept queues' messages waited (see
  // runner::merge). What they hold is taken into `batch` too, and they go
  // with `queue`.
  std::vector<work_queue*> also;
  std::size_t also_next = 0;     // the one whose mail is taken in next, after queue's
  copy_queue batch;              // what is left to run, in order
  std::vector<busy_actor> busy;  // in no order
  // Where each busy actor is in `busy`: every message drained is looked up,
  // and thousands of a queue's actors may wait at once.
  std::unordered_map<const void*, std::size_t> where;

  // Takes what comes next into the drained batch: the mail of `queue`,
  // else of the first of `also`, round robin from also_next, that has
  // some; a claimed batch that one of `also` still holds comes before its
  // mail. False if there was none (by unlocked looks). `gulped`: how many
  // of the envelopes taken came from mailboxes, not counted before.
  // @pre batch is empty.
  bool take_next(std::uint32_t& gulped) noexcept {
    if (!queue->looks_empty())
      if ((gulped = queue->regulp(batch)) != 0) return true;
    for (std::size_t n = 0; n < also.size(); ++n) {
      work_queue& q = *also[also_next];
      also_next = also_next + 1 == also.size() ? 0 : also_next + 1;
      if (!q.batch().empty()) {
        batch.swap(q.batch());
        gulped = q.take_fresh();
        return true;
      }
      if (q.looks_empty()) continue;
      if ((gulped = q.regulp(batch)) != 0) return true;
    }
    return false;
  }

  busy_actor* find(const void* target) noexcept {
    if (busy.empty()) return nullptr;
    const auto it = where.find(target);
    return it != where.end() ? &busy[it->second] : nullptr;
  }
  // Makes `target` busy. Throws std::bad_alloc, and then nothing changed.
  // @pre target is not busy here.
  void make_busy(const void* target) {
    reserve_at_least(busy, busy.size() + 1);
    where.emplace(target, busy.size());
    busy.push_back({const_cast<void*>(target), {}, 0});  // reserved: cannot throw
  }
  // @pre target is busy here.
  void erase(const void* target) noexcept {
    const auto it = where.find(target);
    TACT_ASSERT(it != where.end(), "only a busy actor stops being busy");
    const std::size_t i = it->second;
    where.erase(it);
    if (i + 1 != busy.size()) {
      busy[i] = std::move(busy.back());
      where.find(busy[i].target)->second = i;
    }
    busy.pop_back();
  }
};

}  // namespace tact::detail
