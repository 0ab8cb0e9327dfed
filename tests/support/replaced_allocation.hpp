#pragma once

// Replaces the process's operator new and delete, and the engine's own
// malloc (the linker's --wrap=malloc: the engine is linked in statically),
// with versions that ask the including test, once per allocation, whether
// it fails:
//
//   bool tact::test::allocation_fails() noexcept;  // defined by the test
//
// A failing operator new throws std::bad_alloc (the nothrow forms return
// null), a failing malloc returns null. Include it in one file of a test
// program, and link that program with -Wl,--wrap=malloc.
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" void* __real_malloc(std::size_t size);

namespace tact::test {

bool allocation_fails() noexcept;

namespace replaced {

inline void* allocate(std::size_t size, std::size_t alignment) {
  if (allocation_fails()) throw std::bad_alloc{};
  if (size == 0) size = 1;
  // The real malloc: this file's own calls must not be asked about twice.
  void* p = alignment <= alignof(std::max_align_t)
                ? __real_malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc{};
  return p;
}

inline void* allocate_or_null(std::size_t size) noexcept {
  try {
    return allocate(size, 0);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace replaced

// Sets a thread's flag (say, whether its allocations count) while it
// lives, and restores it after, exceptions included.
class flag_scope {
 public:
  explicit flag_scope(bool& flag) noexcept : flag_{flag}, was_{flag} { flag = true; }
  ~flag_scope() { flag_ = was_; }
  flag_scope(const flag_scope&) = delete;
  flag_scope& operator=(const flag_scope&) = delete;

 private:
  bool& flag_;
  bool was_;
};

}  // namespace tact::test

extern "C" void* __wrap_malloc(std::size_t size) {
  return tact::test::allocation_fails() ? nullptr : __real_malloc(size);
}

void* operator new(std::size_t size) { return tact::test::replaced::allocate(size, 0); }
void* operator new[](std::size_t size) { return tact::test::replaced::allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  return tact::test::replaced::allocate(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return tact::test::replaced::allocate(size, static_cast<std::size_t>(a));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return tact::test::replaced::allocate_or_null(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return tact::test::replaced::allocate_or_null(size);
}
// The replaced new takes its memory from malloc, so free is the matching
// release. GCC cannot see that through the replacement once it inlines a
// delete into its caller (at -O1) and warns of a mismatch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop
