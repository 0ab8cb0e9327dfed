#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <tact/detail/envelope.hpp>

#include "support/assert.hpp"

namespace tact::detail {

// A queue of envelopes copied into arrays (Cforall thesis, "Copy Queue"): a
// send copies its envelope into an array slot, so in steady state nothing
// is allocated per message, and push and pop are a compare and a copy.
//
// Beyond the thesis, the arrays are chunks in a chain rather than one array
// that doubles. A work queue has two copy queues (the mailbox and the
// batch), and with one doubling array each, both grew to the largest
// burst: the batch while it was drained, the mailbox while it filled
// behind it, each sized (to the next power of two) for the whole burst,
// about four times the mail actually waiting. A chain gives a chunk back
// as soon as it has been drained, so the mailbox filling up reuses the
// memory the batch just gave up, and a queue holds about what waits in it
// (design.md, "Copy queues in chunks"). Chunks double from the floor up to
// chunk_most envelopes, so small queues stay small and large bursts take a
// few large chunks; nothing is ever moved or copied when the queue grows.
//
// Reclamation keeps bursts from pinning memory: a drained chunk is freed
// at once (one is kept as a spare, so a queue drained and refilled in
// steady state allocates nothing); and once a batch is drained, a queue
// whose last calm_batches batches each used less than half of its one
// chunk halves it, never below the floor. "Less than half" is the
// thesis's rule (a queue that peaks at 19 of 20 slots keeps its 20
// instead of shrinking to 18 and doubling to 36). The thesis shrinks by
// a slot at every such batch; that, or an eighth per batch, made a queue
// whose batches vary (a few messages, then twenty) reallocate at nearly
// every batch, shrinking under the small ones and growing again for the
// next larger one: at two workers, big spent 8% of its samples in
// malloc and free. Asking for a run of small batches, and then halving,
// reallocates at most once per run and still reaches the floor from the
// largest chunk within a hundred batches.
//
// Not thread-safe: the work queue's lock or its being_processed flag says
// who owns it.
class copy_queue {
  struct chunk;

 public:
  // The largest chunk, in envelopes (24 KiB): beyond it, a burst takes more
  // chunks, not larger ones.
  static constexpr std::uint32_t chunk_most = 1024;  // below 32,768: see floor_

  // `floor`: the first chunk's size and the smallest after reclamation.
  explicit copy_queue(std::uint32_t floor) noexcept
      : floor_{static_cast<std::uint16_t>(reclaiming | std::clamp(floor, 1u, chunk_most))} {}
  ~copy_queue();
  copy_queue(const copy_queue&) = delete;
  copy_queue& operator=(const copy_queue&) = delete;

  // The head never rests at its chunk's end (it moves on to the next, or
  // head and tail rewind together), so the queue is empty exactly when
  // its head has caught up with its tail.
  bool empty() const noexcept { return head_ == tail_; }
  std::uint32_t size() const noexcept {
    if (head_ + head_left_ == reinterpret_cast<const envelope*>(tail_end_))
      return static_cast<std::uint32_t>(tail_ - head_);  // one chunk: the common case
    return head_left_ + middle_ + tail_in_last();
  }
  // Envelopes the allocated chunks can hold, the spare included.
  std::uint32_t capacity() const noexcept;
  // Chunks set aside so that pushes cannot fail (not the one spare a
  // queue keeps for its own reuse): one per push covers the worst case,
  // since a push adds at most one chunk. The smallest chunks there are
  // (one envelope each), taken only where an allocation fails.
  class backup {
   public:
    backup() noexcept = default;
    ~backup();
    backup(const backup&) = delete;
    backup& operator=(const backup&) = delete;

    std::uint32_t size() const noexcept { return size_; }
    // One more chunk; throws std::bad_alloc, and then nothing changed.
    void grow();

   private:
    friend class copy_queue;
    chunk* first_ = nullptr;  // linked through chunk::next
    std::uint32_t size_ = 0;
  };

  // May allocate (first use, or growth); throws std::bad_alloc, and then
  // nothing changed.
  void push(const envelope& e) {
    if (tail_ == reinterpret_cast<envelope*>(tail_end_)) [[unlikely]]
      make_room(nullptr);
    *tail_++ = e;
  }
  // The same, falling back on a chunk of `chunks` where an allocation
  // fails. @pre chunks has one for every push that may still need one.
  void push(const envelope& e, backup& chunks) noexcept {
    if (tail_ == reinterpret_cast<envelope*>(tail_end_)) [[unlikely]]
      make_room(&chunks);
    *tail_++ = e;
  }
  // Puts from[0 .. n) ahead of the head, from[n - 1] first: the order a
  // stack whose top is from[n - 1] runs in. Into the slots the head has
  // left behind in its chunk, and the rest into one new chunk put before
  // it. @pre n <= chunk_most. Throws std::bad_alloc before anything
  // changed: all of them go, or none.
  void push_front(const envelope* from, std::uint32_t n);
  // Allocates the first chunk now if there is none yet.
  void reserve() {
    if (tail_ == nullptr) make_room(nullptr);
  }

  // @pre !empty().
  envelope pop() noexcept {
    TACT_ASSERT(!empty(), "an envelope is popped from a copy queue that has one");
    const envelope e = *head_;
    drop_front();
    return e;
  }
  // The same in two steps, for a reader that copies the words itself.
  const envelope& front() const noexcept {
    TACT_ASSERT(!empty(), "a copy queue's front is read when it has one");
    return *head_;
  }
  void drop_front() noexcept {
    TACT_ASSERT(!empty(), "a copy queue's front is dropped when it has one");
    ++head_;
    if (--head_left_ == 0) [[unlikely]]
      next_chunk();
  }
  // The i-th envelope from the front (a walk over the chunks: for
  // inspection, not for the message path).
  const envelope& at(std::uint32_t i) const noexcept;

  // @pre empty(). Rewinds, and reclaims what this batch did not need (see
  // above).
  void recycle() noexcept {
    if ((floor_ & reclaiming) != 0) {
      reclaim();
      return;
    }
    // One chunk of the floor's size: its slots end where its header is.
    head_ = tail_ = reinterpret_cast<envelope*>(tail_end_) - floor_;
    head_left_ = floor_;
  }

  void swap(copy_queue& other) noexcept;

 private:
  static_assert(chunk_most < 0x8000);
  // Batches in a row that must use less than half of a queue's one chunk
  // before it is halved (see above).
  static constexpr std::uint8_t calm_batches = 16;
  // Throws std::bad_alloc, unless `chunks` has one to give.
  [[gnu::cold]] void make_room(backup* chunks);
  static chunk* make_chunk(std::uint32_t capacity, backup* chunks);
  void reclaim() noexcept;
  void next_chunk() noexcept;
  std::uint32_t tail_in_last() const noexcept;
  chunk* head_chunk() const noexcept;
  void start_at(chunk* c) noexcept;

  // 32 bytes, as the thesis's array queue: the mailbox shares its work
  // queue's one senders' cache line with the lock (work_queue.hpp). Each
  // chunk's header follows its slots, so the end of a run of slots names
  // its chunk: head_ + head_left_ is the first chunk's header, tail_end_
  // the last's. All null before the first push. The chain's links go on
  // past the last chunk to at most one spare.
  envelope* head_ = nullptr;
  envelope* tail_ = nullptr;
  chunk* tail_end_ = nullptr;
  std::uint32_t middle_ = 0;     // envelopes in the chunks between the first and the last
  std::uint16_t head_left_ = 0;  // envelopes from head_ to its chunk's end
  // The floor, and the `reclaiming` bit: set unless the queue holds just
  // one chunk of the floor's size (so also with no chunk yet, and with a
  // chain, a spare or a larger chunk: recycle() has something to look
  // at). Clear, recycle() reads nothing, not even the chunk's header, and
  // floor_ is the floor itself.
  static constexpr std::uint16_t reclaiming = 0x8000;
  std::uint16_t floor_;
  std::uint32_t floor() const noexcept { return floor_ & (reclaiming - 1); }
};

static_assert(std::is_trivially_copyable_v<envelope>);
static_assert(sizeof(copy_queue) == 32, "a mailbox fits its work queue's senders' line");

}  // namespace tact::detail
