#pragma once

#include <cstddef>
#include <new>
#include <utility>

#include "support/assert.hpp"

namespace tact::detail {

// A heap array of n objects that can be neither copied nor moved (they hold
// atomics and locks), each built in place from make(i), aligned for T.
template <class T>
class fixed_array {
 public:
  template <class Make>
  fixed_array(std::size_t n, Make make)
      : data_{static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}))} {
    try {
      for (; size_ < n; ++size_) ::new (static_cast<void*>(data_ + size_)) T(make(size_));
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~fixed_array() { destroy(); }
  fixed_array(const fixed_array&) = delete;
  fixed_array& operator=(const fixed_array&) = delete;

  std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept {
    TACT_ASSERT(i < size_, "a fixed array is indexed within its size");
    return data_[i];
  }
  const T& operator[](std::size_t i) const noexcept {
    TACT_ASSERT(i < size_, "a fixed array is indexed within its size");
    return data_[i];
  }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

 private:
  void destroy() noexcept {
    while (size_ > 0) data_[--size_].~T();
    ::operator delete (data_, std::align_val_t{alignof(T)});
  }

  T* data_;
  std::size_t size_ = 0;
};

}  // namespace tact::detail
