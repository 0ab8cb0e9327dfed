#pragma once

#include <cstdint>
#include <type_traits>

#include <tact/detail/envelope.hpp>

#include "support/assert.hpp"

namespace tact::detail {

// An array-backed queue of envelopes (Cforall thesis, "Copy Queue"). A send
// copies its envelope into the array, so in steady state nothing is
// allocated per message. Made for the gulp pattern: a batch is filled,
// then drained front to back, then rewound, so push and pop are O(1)
// (push amortized: the array doubles when full) with no shifting.
//
// Reclamation keeps bursts from pinning memory: when a batch used less
// than half of the array, the array shrinks by an eighth, never below the
// floor. "Less than half" is the thesis's rule (a queue that peaks at 19 of
// 20 slots keeps its 20 instead of shrinking to 18 and doubling to 36);
// shrinking by an eighth rather than the thesis's one slot per batch reaches
// the same size in far fewer reallocations.
//
// Not thread-safe: the work queue's lock or its being_processed flag says
// who owns it.
class copy_queue {
 public:
  // `floor`: the first array's size and the smallest after reclamation.
  explicit copy_queue(std::uint32_t floor) noexcept : floor_{floor > 0 ? floor : 1} {}
  ~copy_queue();
  copy_queue(const copy_queue&) = delete;
  copy_queue& operator=(const copy_queue&) = delete;

  bool empty() const noexcept { return head_ == tail_; }
  std::uint32_t size() const noexcept { return tail_ - head_; }
  std::uint32_t capacity() const noexcept { return capacity_; }

  // May allocate (first use, or growth); throws std::bad_alloc.
  void push(const envelope& e) {
    if (tail_ == capacity_) [[unlikely]]
      make_room();
    data_[tail_++] = e;
  }
  // Allocates the first array now if there is none yet.
  void reserve() {
    if (capacity_ == 0) make_room();
  }

  // @pre !empty().
  envelope pop() noexcept {
    TACT_ASSERT(!empty(), "an envelope is popped from a copy queue that has one");
    return data_[head_++];
  }
  // The same in two steps, for a reader that copies the words itself.
  const envelope& front() const noexcept {
    TACT_ASSERT(!empty(), "a copy queue's front is read when it has one");
    return data_[head_];
  }
  void drop_front() noexcept {
    TACT_ASSERT(!empty(), "a copy queue's front is dropped when it has one");
    ++head_;
  }
  // The `i`th envelope from the front, for inspection. @pre i < size().
  const envelope& at(std::uint32_t i) const noexcept {
    TACT_ASSERT(i < size(), "a copy queue is read within its envelopes");
    return data_[head_ + i];
  }

  // @pre empty(). Rewinds for the next batch and applies the reclamation
  // rule to what this batch used.
  void recycle() noexcept;

  // Exchanges contents; both queues keep their own floor.
  void swap(copy_queue& other) noexcept;

 private:
  [[gnu::cold]] void make_room();

  envelope* data_ = nullptr;
  std::uint32_t capacity_ = 0;
  std::uint32_t head_ = 0;  // next to pop
  std::uint32_t tail_ = 0;  // next free slot
  std::uint32_t high_ = 0;  // slots used before a compaction, this batch
  std::uint32_t floor_;
};

static_assert(std::is_trivially_copyable_v<envelope>);

}  // namespace tact::detail
