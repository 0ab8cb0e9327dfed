#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include <tact/detail/envelope.hpp>

#include "mailbox/copy_queue.hpp"
#include "support/assert.hpp"

namespace tact::detail {

// A runner's sends to work queues' mailboxes, held back while its batch
// runs and posted together at the batch's end: each target queue's share
// under one lock section and with one wake-up (work_queue::post_all),
// instead of one lock, and one transfer of the queue's line between
// cores, per send. The order of the sends to each queue is kept; sends to
// different queues may land in another order than they were made, which
// nothing promises anyway (FIFO holds per sender and receiver). The
// runner decides when it may hold sends back and when it must post them
// (runner.hpp, "Outbox"); this only keeps them.
//
// The sends are kept in send order, and per target queue they form a
// chain, the queues in the order of their first send: holding a send
// costs a few stores and a load, and posting gathers each queue's chain,
// or, where every send held goes to one queue (a flood, or a pipeline
// stage's output), posts them as they lie.
//
// It holds up to `shared_most` sends, but only `one_queue_most` while
// they all go to one queue: sends spread over many queues go in larger
// groups per lock section, and a flood keeps groups small enough that its
// receiver does not wait long for each (docs/design.md, "How much it
// holds"). While its runner runs alone (run_alone(): the governor stood
// the other workers down) it holds up to `capacity`, to one queue or
// many: no other worker waits for these sends, which go to queues the
// runner takes in itself at its next turn. A turn whose work in flight
// outgrows its batch posts most of its sends (executor's rounds, each
// spread over 32 queues), and at shared_most they went about eight to a
// lock section. A held send compares its count with one word, `room_`:
// the bound, or the backup chunks if there are fewer (see ready()), set
// again whenever either changes, which is seldom.
class outbox {
 public:
  static constexpr std::uint32_t capacity = 1024;
  static constexpr std::uint32_t shared_most = 254;
  static constexpr std::uint32_t one_queue_most = 128;

  // `queues`: how many queue indexes there are (sponsors' included).
  explicit outbox(std::uint32_t queues) : last_{std::make_unique<std::uint16_t[]>(queues)} {}

  bool empty() const noexcept { return count_ == 0; }
  bool full() const noexcept { return count_ == bound(); }
  // Whether add() may be called: there is room, and a backup chunk for
  // each send held and the next (see drain()).
  bool ready() const noexcept { return count_ < room_; }
  // One more backup chunk. Throws std::bad_alloc, and then nothing changed.
  void add_backup() {
    backup_.grow();
    set_room();
  }

  // Whether a send to `queue` is held.
  bool holds(std::uint32_t queue) const noexcept { return last_[queue] != 0; }

  // Whether its runner runs alone, no other worker running meanwhile: the
  // bound (see above). Set between batches. @pre empty()
  bool runs_alone() const noexcept { return alone_; }
  void run_alone(bool alone) noexcept {
    TACT_ASSERT(empty(), "the bound changes between batches, with nothing held");
    alone_ = alone;
    set_room();
  }

  // @pre ready().
  void add(std::uint32_t queue, void* target, void* message, run_fn run) noexcept {
    TACT_ASSERT(ready(), "an outbox takes a send while it has room and a backup chunk for it");
    const auto at = static_cast<std::uint16_t>(count_);
    held_[count_++] = envelope{target, message, run};
    next_[at] = none;
    if (const std::uint16_t last = last_[queue]; last != 0) {
      next_[last - 1u] = at;
    } else {
      heads_[heads_count_++] = {queue, at};
      if (heads_count_ == 2) set_room();  // the bound rises to shared_most
    }
    last_[queue] = static_cast<std::uint16_t>(at + 1u);
  }

  // Calls post(queue, envelopes, n, backup) for each queue held for, in
  // the order of their first sends, with that queue's sends in order;
  // `post` posts them all, taking chunks from `backup` where an allocation
  // fails (it has one for each send held, so posting cannot fail). Leaves
  // the outbox empty.
  template <class Post>
  void drain(Post&& post) noexcept {
    if (heads_count_ == 1) {
      last_[heads_[0].queue] = 0;
      post(heads_[0].queue, static_cast<const envelope*>(held_), count_, backup_);
    } else {
      for (std::uint32_t h = 0; h < heads_count_; ++h) {
        std::uint32_t n = 0;
        for (std::uint16_t i = heads_[h].first; i != none; i = next_[i]) run_[n++] = held_[i];
        last_[heads_[h].queue] = 0;
        post(heads_[h].queue, static_cast<const envelope*>(run_), n, backup_);
      }
    }
    heads_count_ = 0;
    count_ = 0;
    set_room();
  }

 private:
  static_assert(one_queue_most < shared_most && shared_most < capacity);
  static_assert(capacity < 0xffff, "entries are named by 16 bits, 0xffff being none");
  static constexpr std::uint16_t none = 0xffff;
  struct head {
    std::uint32_t queue;
    std::uint16_t first;
  };
  // capacity while the runner runs alone; else one_queue_most while every
  // send held goes to one queue, shared_most once they go to several.
  std::uint32_t bound() const noexcept {
    return alone_ ? capacity : heads_count_ > 1 ? shared_most : one_queue_most;
  }
  void set_room() noexcept { room_ = std::min(bound(), backup_.size()); }

  std::uint32_t count_ = 0;
  std::uint32_t room_ = 0;  // the sends it may hold now: bound() or the backup chunks
  std::uint32_t heads_count_ = 0;
  bool alone_ = false;
  envelope held_[capacity];       // in send order
  std::uint16_t next_[capacity];  // the next send held for the same queue, or none
  head heads_[capacity];
  envelope run_[capacity];  // one queue's sends, gathered for posting
  // Per queue index: its last send held plus one, 0 if it has none.
  std::unique_ptr<std::uint16_t[]> last_;
  copy_queue::backup backup_;
};

}  // namespace tact::detail
