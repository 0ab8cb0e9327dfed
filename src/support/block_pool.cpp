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

constexpr std::size_t granule = 16;
constexpr std::size_t size_classes = 16;  // blocks of 16, 32, ..., 256 bytes
constexpr std::uint32_t keep = 256;

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

struct loose_block {
  loose_block* next;
};

struct free_list {
  loose_block* head = nullptr;
  std::uint32_t count = 0;
  std::uint32_t limit = 0;  // keep, once the thread's clean-up is registered
};

enum class thread_state : std::uint8_t { unregistered, registered, exited };

// Trivially destructible, so reaching it costs no initialization check.
constinit thread_local std::array<free_list, size_classes> lists{};
constinit thread_local thread_state state = thread_state::unregistered;

// Gives the thread's blocks back to the heap when it exits.
struct janitor {
  bool armed = false;
  ~janitor() {
    state = thread_state::exited;
    for (free_list& l : lists) {
      while (l.head != nullptr) ::operator delete(std::exchange(l.head, l.head->next));
      l.count = 0;
      l.limit = 0;
    }
  }
};
thread_local janitor exit_cleanup;

// The size class of a block of `size` bytes (size > 0); size_classes or
// more if it is too large to pool.
std::size_t class_of(std::size_t size) noexcept { return (size - 1) / granule; }

// A free that found its list at its limit: full, or not yet open because
// the thread has no clean-up registered (its first free registers it,
// which is what touching a thread_local with a destructor does), or closed
// because the thread is exiting (a later thread-local destructor freeing a
// block).
[[gnu::noinline]] void free_slowly(free_list& l, void* block) noexcept {
  if (state == thread_state::unregistered) {
    exit_cleanup.armed = true;
    state = thread_state::registered;
    for (free_list& each : lists) each.limit = keep;
  }
  if (l.count >= l.limit) return ::operator delete(block);
  ++l.count;
  l.head = ::new (block) loose_block{l.head};
}

}  // namespace

void* allocate_block(std::size_t size) {
  const std::size_t c = class_of(size);
  if (!pooled || c >= size_classes) return ::operator new(size);
  free_list& l = lists[c];
  if (l.head == nullptr) return ::operator new((c + 1) * granule);
  --l.count;
  return std::exchange(l.head, l.head->next);
}

void free_block(void* block, std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  if (!pooled || c >= size_classes) return ::operator delete(block);
  free_list& l = lists[c];
  if (l.count >= l.limit) [[unlikely]] return free_slowly(l, block);
  ++l.count;
  l.head = ::new (block) loose_block{l.head};
}

std::size_t kept_blocks(std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  return pooled && c < size_classes ? lists[c].count : 0;
}

std::size_t block_keep_limit() noexcept { return pooled ? keep : 0; }

}  // namespace tact::detail
