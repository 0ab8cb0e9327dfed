#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include <tact/detail/block_pool.hpp>

// Storage for what lives one message long: a transactional send allocates
// a message and its dispatch frees it; a become builds a behaviour and,
// once it is safe, frees the one it replaced; tact::send_new makes a
// classic message that its delivery frees. So a chain of sends (an
// actor re-sending to itself, a pipeline) or of becomes (a counter) would
// turn the heap over once per message. Each thread keeps the blocks it
// frees, by size, and hands them out again: allocating or freeing one is
// then a push or pop on a thread-local list, with no call into the heap.
// The most recently freed block goes out first, while it is still in cache.
//
// A thread keeps at most `keep` blocks per size, so a thread that only
// frees (a consumer fed by other threads) holds a bounded amount and gives
// the rest back to the heap. Blocks move freely between threads: a block
// is an ordinary operator-new allocation, whoever frees it. Nothing here is
// shared between threads, so nothing here is atomic.
//
// Under AddressSanitizer every block comes from the heap, so a use after
// free is still caught.
namespace tact::detail {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(hwaddress_sanitizer)
#define TACT_HEAP_CHECKED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_HWADDRESS__) || defined(TACT_HEAP_CHECKED)
constexpr bool pooled = false;
#else
constexpr bool pooled = true;
#endif

constexpr std::uint32_t keep = 256;

enum class thread_state : std::uint8_t { unregistered, registered, exited };
constinit thread_local thread_state state = thread_state::unregistered;

// Gives the thread's blocks back to the heap when it exits.
struct janitor {
  bool armed = false;
  ~janitor() {
    state = thread_state::exited;
    for (block_list& l : block_lists) {
      while (l.head != nullptr) ::operator delete(std::exchange(l.head, *static_cast<void**>(l.head)));
      l.count = 0;
      l.limit = 0;
    }
  }
};
thread_local janitor exit_cleanup;

// The size class of a block of `size` bytes (size > 0); block_classes or
// more if it is too large to pool.
std::size_t class_of(std::size_t size) noexcept { return (size - 1) / block_granule; }

}  // namespace

constinit thread_local block_list block_lists[block_classes]{};

// The list of the block's size was empty, or it is too large to pool.
void* allocate_block_slowly(std::size_t size) {
  const std::size_t c = class_of(size);
  if (c >= block_classes) return ::operator new(size);
  return ::operator new((c + 1) * block_granule);
}

// A free that found its list at its limit: full, or not yet open because
// the thread has no clean-up registered (its first free registers it,
// which is what touching a thread_local with a destructor does), or closed
// because the thread is exiting (a later thread-local destructor freeing a
// block), or never open (nothing pooled); or a block too large to pool.
void free_block_slowly(void* block, std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  if (!pooled || c >= block_classes) return ::operator delete(block);
  if (state == thread_state::unregistered) {
    exit_cleanup.armed = true;
    state = thread_state::registered;
    for (block_list& each : block_lists) each.limit = keep;
  }
  block_list& l = block_lists[c];
  if (l.count >= l.limit) return ::operator delete(block);
  ++l.count;
  l.head = ::new (block) void*{l.head};
}

std::size_t kept_blocks(std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  return pooled && c < block_classes ? block_lists[c].count : 0;
}

std::size_t block_keep_limit() noexcept { return pooled ? keep : 0; }

}  // namespace tact::detail
