#include "mailbox/copy_queue.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

namespace tact::detail {

// A chunk's header. It follows the chunk's `capacity` envelope slots in the
// same block, so that the end of a run of slots is where its header is.
struct copy_queue::chunk {
  envelope* begin;  // the block's start: its first slot
  chunk* next;      // the next chunk of the chain, or the spare after the last
  std::uint32_t capacity;
  bool chained;       // a push moved into this chunk from the one before it
  std::uint8_t calm;  // batches in a row, the last, that used less than half of it

  static chunk* make(std::uint32_t capacity) {
    static_assert(alignof(chunk) <= alignof(envelope), "a header follows the slots aligned");
    void* block = std::malloc(std::size_t{capacity} * sizeof(envelope) + sizeof(chunk));
    if (block == nullptr) throw std::bad_alloc{};
    auto* const slots = static_cast<envelope*>(block);
    return new (slots + capacity) chunk{slots, nullptr, capacity, false, 0};
  }
  static void free(chunk* c) noexcept { std::free(c->begin); }
};

copy_queue::backup::~backup() {
  while (first_ != nullptr) chunk::free(std::exchange(first_, first_->next));
}

void copy_queue::backup::grow() {
  chunk* const c = chunk::make(1);
  c->next = first_;
  first_ = c;
  ++size_;
}

copy_queue::chunk* copy_queue::make_chunk(std::uint32_t capacity, backup* chunks) {
  if (chunks == nullptr || chunks->first_ == nullptr) return chunk::make(capacity);
  try {
    return chunk::make(capacity);
  } catch (const std::bad_alloc&) {
    chunk* const c = std::exchange(chunks->first_, chunks->first_->next);
    --chunks->size_;
    c->next = nullptr;
    return c;
  }
}

copy_queue::chunk* copy_queue::head_chunk() const noexcept {
  return reinterpret_cast<chunk*>(head_ + head_left_);
}

std::uint32_t copy_queue::tail_in_last() const noexcept {
  return static_cast<std::uint32_t>(tail_ - tail_end_->begin);
}

copy_queue::~copy_queue() {
  if (tail_end_ == nullptr) return;
  for (chunk* c = head_chunk(); c != nullptr;) chunk::free(std::exchange(c, c->next));
}

std::uint32_t copy_queue::capacity() const noexcept {
  std::uint32_t total = 0;
  if (tail_end_ != nullptr)
    for (const chunk* c = head_chunk(); c != nullptr; c = c->next) total += c->capacity;
  return total;
}

const envelope& copy_queue::at(std::uint32_t i) const noexcept {
  TACT_ASSERT(i < size(), "a copy queue is read within its envelopes");
  if (i < head_left_) return head_[i];
  i -= head_left_;
  for (const chunk* c = head_chunk()->next;; c = c->next) {
    if (i < c->capacity) return c->begin[i];
    i -= c->capacity;
  }
}

void copy_queue::start_at(chunk* c) noexcept {
  head_ = tail_ = c->begin;
  head_left_ = static_cast<std::uint16_t>(c->capacity);
  tail_end_ = c;
  middle_ = 0;
}

// The last chunk is full (or there is none yet): the push moves on to the
// spare, or to a new chunk twice the last's size, up to chunk_most.
// Allocates before it changes anything.
void copy_queue::make_room(backup* chunks) {
  if (tail_end_ == nullptr) {
    chunk* const c = make_chunk(floor(), chunks);
    start_at(c);
    if (c->capacity == floor()) floor_ &= ~reclaiming;
    return;
  }
  // Not empty: an empty queue's positions rewind as its last envelope is
  // popped (next_chunk), so it never has a full chunk.
  chunk* const last = tail_end_;
  if (last->next == nullptr)
    last->next = make_chunk(std::min(chunk_most, std::max(floor(), 2 * last->capacity)), chunks);
  chunk* const c = last->next;
  c->chained = true;
  floor_ |= reclaiming;
  if (last != head_chunk()) middle_ += last->capacity;
  tail_ = c->begin;
  tail_end_ = c;
}

// from[0] goes right before the head, from[n - 1] first of all. What does
// not fit in the slots the head left behind in its chunk goes into a new
// chunk put before that one, at its end; the chunk that was first is then
// filled from its start, a whole chunk between the first and the last
// (counted in middle_) unless it is also the last (counted by its tail).
void copy_queue::push_front(const envelope* from, std::uint32_t n) {
  TACT_ASSERT(n <= chunk_most, "a copy queue takes at most a chunk's worth in front at once");
  if (n == 0) return;
  if (tail_end_ == nullptr) make_room(nullptr);
  chunk* const first = head_chunk();
  const auto slack = static_cast<std::uint32_t>(head_ - first->begin);
  chunk* const before = n > slack ? chunk::make(std::max(n - slack, floor())) : nullptr;
  const std::uint32_t in_first = std::min(n, slack);
  for (std::uint32_t i = 0; i < in_first; ++i) *--head_ = from[i];
  head_left_ = static_cast<std::uint16_t>(head_left_ + in_first);
  if (before == nullptr) return;
  before->next = first;
  if (first != tail_end_) middle_ += first->capacity;
  first->chained = true;
  floor_ |= reclaiming;
  head_ = reinterpret_cast<envelope*>(before);  // its slots end where its header is
  for (std::uint32_t i = in_first; i < n; ++i) *--head_ = from[i];
  head_left_ = static_cast<std::uint16_t>(n - in_first);
}

// The head reached its chunk's end. If the tail is in that chunk too, the
// queue is empty: it rewinds. Otherwise the drained chunk leaves the chain
// and becomes the spare after the last chunk, or is freed if there is a
// spare at least as large.
void copy_queue::next_chunk() noexcept {
  chunk* const drained = head_chunk();
  chunk* const last = tail_end_;
  if (drained == last) {
    start_at(drained);
    return;
  }
  chunk* const next = drained->next;
  head_ = next->begin;
  head_left_ = static_cast<std::uint16_t>(next->capacity);
  if (next != last) middle_ -= next->capacity;
  chunk* const spare = last->next;
  if (spare != nullptr && spare->capacity >= drained->capacity) {
    chunk::free(drained);
    return;
  }
  if (spare != nullptr) chunk::free(spare);
  drained->next = nullptr;
  drained->chained = false;
  drained->calm = 0;
  last->next = drained;
}

void copy_queue::reclaim() noexcept {
  TACT_ASSERT(empty(), "a copy queue is recycled once drained");
  if (tail_end_ == nullptr) return;
  // Empty: head and tail are in one chunk, the last.
  chunk* const c = tail_end_;
  const auto used = static_cast<std::uint32_t>(tail_ - c->begin);
  start_at(c);
  const bool chained = std::exchange(c->chained, false);
  if (chained) return;
  // This batch fit in one chunk: it needs no spare for the next.
  if (c->next != nullptr) chunk::free(std::exchange(c->next, nullptr));
  if (c->capacity == floor()) {
    floor_ &= ~reclaiming;  // one chunk, the floor's: nothing left to reclaim
    return;
  }
  if (used >= c->capacity / 2) {
    c->calm = 0;
    return;
  }
  if (++c->calm < calm_batches) return;
  const std::uint32_t shrunk = std::max(floor(), c->capacity / 2);
  chunk* smaller = nullptr;
  try {
    smaller = chunk::make(shrunk);
  } catch (const std::bad_alloc&) {
    return;  // keeps the larger one
  }
  chunk::free(c);
  start_at(smaller);
}

void copy_queue::swap(copy_queue& other) noexcept {
  std::swap(head_, other.head_);
  std::swap(tail_, other.tail_);
  std::swap(tail_end_, other.tail_end_);
  std::swap(middle_, other.middle_);
  std::swap(head_left_, other.head_left_);
  std::swap(floor_, other.floor_);
}

}  // namespace tact::detail
