#pragma once

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <vector>

#include <tact/detail/envelope.hpp>

#include "mailbox/copy_queue.hpp"
#include "mailbox/work_queue.hpp"
#include "support/assert.hpp"

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
// keeps released ones for reuse, arrays included.
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
  copy_queue batch;              // what is left to run, in order
  std::vector<busy_actor> busy;  // a handful at most: scanned

  busy_actor* find(const void* target) noexcept {
    const auto it = std::find_if(busy.begin(), busy.end(),
                                 [target](const busy_actor& b) { return b.target == target; });
    return it != busy.end() ? &*it : nullptr;
  }
  // @pre target is busy here.
  void erase(const void* target) noexcept {
    busy_actor* b = find(target);
    TACT_ASSERT(b != nullptr, "only a busy actor stops being busy");
    if (b != &busy.back()) *b = std::move(busy.back());
    busy.pop_back();
  }
};

}  // namespace tact::detail
