#include "mailbox/copy_queue.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

namespace tact::detail {

copy_queue::~copy_queue() { std::free(data_); }

void copy_queue::make_room() {
  high_ = std::max(high_, tail_);
  // A batch that is being drained while it grows (same-queue sends) first
  // reuses the consumed front instead of doubling.
  if (head_ > 0 && head_ >= capacity_ / 2) {
    std::memmove(data_, data_ + head_, size() * sizeof(envelope));
    tail_ -= head_;
    head_ = 0;
    return;
  }
  if (capacity_ > std::numeric_limits<std::uint32_t>::max() / 2) throw std::bad_alloc{};
  const std::uint32_t grown = capacity_ == 0 ? floor_ : capacity_ * 2;
  auto* fresh = static_cast<envelope*>(std::malloc(grown * sizeof(envelope)));
  if (fresh == nullptr) throw std::bad_alloc{};
  if (data_ != nullptr) std::memcpy(fresh, data_ + head_, size() * sizeof(envelope));
  std::free(data_);
  data_ = fresh;
  capacity_ = grown;
  tail_ -= head_;
  head_ = 0;
}

void copy_queue::recycle() noexcept {
  TACT_ASSERT(empty(), "a copy queue is recycled once drained");
  const std::uint32_t used = std::max(high_, tail_);
  head_ = tail_ = high_ = 0;
  if (used >= capacity_ / 2 || capacity_ <= floor_) return;
  const std::uint32_t shrunk = std::max(floor_, capacity_ - std::max(1u, capacity_ / 8));
  // The array is empty, so nothing needs copying; if the allocator cannot
  // shrink, keeping the larger array is correct, only less frugal.
  if (void* smaller = std::realloc(data_, shrunk * sizeof(envelope))) {
    data_ = static_cast<envelope*>(smaller);
    capacity_ = shrunk;
  }
}

void copy_queue::swap(copy_queue& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
  std::swap(head_, other.head_);
  std::swap(tail_, other.tail_);
  std::swap(high_, other.high_);
}

}  // namespace tact::detail
