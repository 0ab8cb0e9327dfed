#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
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
// A thread keeps at most `keep` blocks per size. A producer on one thread
// and its consumer on another (a transactional counter fed by a producer
// another worker runs) would still go through the heap for every message:
// the producer's list stays empty, the consumer's full. glibc's heap then
// frees each block on the consumer's thread into the producer's arena,
// under that arena's lock, which the producer's next allocation takes too:
// at two workers tx_counting_bounded ran 2.5x slower in the runs where the
// two threads met on that lock. So a full list is not given to the heap
// block by block: it goes whole, in one step, to a depot per size shared
// by the threads, and a thread whose list is empty takes a whole list from
// there before it makes new blocks. A list moves under the depot's lock
// once per `keep` blocks; the depot holds at most `depot_bytes` of blocks
// per size, and what does not fit goes back where it came from (below).
//
// Why that much: a burst. A producer held back by a bounded mailbox
// (tx_counting_bounded: a bound of 65,536, the producer muted until the
// counter is down to half) has tens of thousands of messages in flight,
// freed and made again in waves of 32,768 32-byte blocks. With 4 lists
// per size the depot took the first 1,024 of each wave and the heap the
// rest, and glibc's malloc, free and consolidation were then nearly half
// of the run, even on one worker whose queues held producer and counter
// apart (0.83 s against 0.51 with both on one queue). 2 MiB per size
// takes such a wave whole; it is also the most a size can keep after a
// burst, 64 MiB over all 32 sizes. The per-thread lists are
// the thread's alone: nothing on the common path is atomic.
//
// Where the blocks come from: chunks of chunk_bytes, cut into blocks of one
// size each, back to back. A block of the heap's carries its size in the
// word before it and is rounded up to 16 bytes with it: glibc gives a
// 24-byte message (tx_counting's increment, a three-word header and
// nothing else) a 32-byte chunk, and ten million of them in flight took
// 305 MiB where 229 hold them. A thread cuts the blocks of each size from
// a chunk of its own (a pointer bump, no lock), and a block goes back to
// its chunk, whichever thread frees it, only where it would have gone to
// the heap: the depot full, or the thread exiting. The chunk goes back to
// the heap when its last block comes back, so a burst does not pin its
// peak. A block finds its chunk by its address: chunks are aligned to
// their size. The general-purpose allocators Debian packages (mimalloc,
// jemalloc) cut blocks so too, but their libraries export malloc and
// free: linked into a program ahead of libc, one would replace the
// program's allocator, which is the program's choice.
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
constexpr std::size_t depot_bytes = std::size_t{2} << 20;
// The most lists the depot holds for size class c.
constexpr std::uint32_t depot_most(std::size_t c) noexcept {
  return static_cast<std::uint32_t>(depot_bytes / (keep * (c + 1) * block_granule));
}
static_assert(depot_most(block_classes - 1) >= 4, "every size keeps a few lists");

// Full lists given up by threads, `keep` blocks each, for threads whose
// list of that size is empty. A list is linked through its blocks' first
// words, as on its thread; the depot links lists through the second word
// of their first block (every block holds two pointers).
struct depot {
  std::mutex lock;
  void* lists = nullptr;
  // Written under the lock; read without it first, so that a thread finds
  // an empty or full depot without taking the lock (a miss costs no more
  // than the new block it is in front of).
  std::atomic<std::uint32_t> count{0};
};
// Trivially destructible, so still there for a thread that frees blocks
// while the program's statics are being destroyed.
static_assert(std::is_trivially_destructible_v<depot>);
constinit std::array<depot, block_classes> depots{};
depot& depot_of(std::size_t c) noexcept { return depots[c]; }
void*& list_link(void* first) noexcept { return static_cast<void**>(first)[1]; }

// Gives the thread's full list `l` to the depot, leaving `l` empty; false
// if the depot is full (`l` unchanged).
bool give_list(std::size_t c, block_list& l) noexcept {
  depot& d = depot_of(c);
  if (d.count.load(std::memory_order_relaxed) == depot_most(c)) return false;
  const std::lock_guard guard{d.lock};
  const std::uint32_t count = d.count.load(std::memory_order_relaxed);
  if (count == depot_most(c)) return false;
  list_link(l.head) = std::exchange(d.lists, l.head);
  d.count.store(count + 1, std::memory_order_relaxed);
  l.head = nullptr;
  l.count = 0;
  return true;
}

// Fills the thread's empty list `l` from the depot; false if it had none.
bool take_list(std::size_t c, block_list& l) noexcept {
  depot& d = depot_of(c);
  if (d.count.load(std::memory_order_relaxed) == 0) return false;
  const std::lock_guard guard{d.lock};
  if (d.lists == nullptr) return false;
  l.head = std::exchange(d.lists, list_link(d.lists));
  l.count = keep;
  d.count.store(d.count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  return true;
}

// ---- chunks ----

constexpr std::size_t chunk_bytes = std::size_t{256} << 10;
// The blocks of size class c: at least two pointers each (see list_link),
// in a chunk after its header, which takes a cache line of its own (other
// threads write it as their blocks come back) and keeps blocks of a
// multiple of 16 bytes aligned to 16. A block of another size is aligned
// to 8, which is all a type of that size can ask (its size is a multiple
// of its alignment).
constexpr std::size_t chunk_header_bytes = 64;
constexpr std::size_t stride_of(std::size_t c) noexcept {
  return std::max((c + 1) * block_granule, 2 * sizeof(void*));
}
constexpr std::uint32_t blocks_per_chunk(std::size_t c) noexcept {
  return static_cast<std::uint32_t>((chunk_bytes - chunk_header_bytes) / stride_of(c));
}

// At a chunk's start. `owed` counts the chunk's blocks that have not come
// back: all of them from the start, those not cut yet included, until the
// thread cutting it lets go of the rest (see let_go). So it reaches zero
// exactly once, when nothing else can reach the chunk: no block of it is
// live, or in a list or the depot, and no thread cuts from it.
struct chunk_header {
  std::atomic<std::uint32_t> owed;
};
static_assert(sizeof(chunk_header) <= chunk_header_bytes);

// Chunks allocated and not yet freed, over all threads and sizes (for
// tests: see block_chunks()).
constinit std::atomic<std::size_t> chunks_held{0};

chunk_header& chunk_of(void* block) noexcept {
  return *reinterpret_cast<chunk_header*>(reinterpret_cast<std::uintptr_t>(block) &
                                          ~std::uintptr_t{chunk_bytes - 1});
}

// A chunk aligned to its size, from the heap: glibc takes a page before
// and after it for its bookkeeping, 3% of a chunk of this size (a fourth
// of one of 64 KiB). Mapped straight from the kernel instead, tx_counting's
// ten million messages took 242 MB rather than 249, but then no test could
// make the allocation fail.
void* new_chunk() {
  void* const chunk = ::operator new (chunk_bytes, std::align_val_t{chunk_bytes});
  chunks_held.fetch_add(1, std::memory_order_relaxed);
  return chunk;
}

// Settles `count` of the chunk's blocks; the last frees it. Acquire and
// release: whatever any thread wrote into a block of it happens before the
// free.
void settle(chunk_header& h, std::uint32_t count) noexcept {
  if (h.owed.fetch_sub(count, std::memory_order_acq_rel) != count) return;
  h.~chunk_header();
  ::operator delete (&h, std::align_val_t{chunk_bytes});
  chunks_held.fetch_sub(1, std::memory_order_relaxed);
}

// The chunk a thread cuts blocks of one size from: [next, end) not cut yet.
// Trivially destructible, as the lists are.
struct cutting {
  char* next = nullptr;
  char* end = nullptr;
};
constinit thread_local std::array<cutting, block_classes> cuttings{};

// The next block of class c from the thread's chunk, or from a new one
// when that is used up (it is then owed only what is live of it).
void* cut(std::size_t c) {
  cutting& k = cuttings[c];
  if (k.next == k.end) {
    void* const raw = new_chunk();
    ::new (raw) chunk_header{blocks_per_chunk(c)};
    k.next = static_cast<char*>(raw) + chunk_header_bytes;
    k.end = k.next + std::size_t{blocks_per_chunk(c)} * stride_of(c);
  }
  return std::exchange(k.next, k.next + stride_of(c));
}

// The thread stops cutting from its chunk of class c (it is exiting): the
// blocks not cut are settled.
void let_go(std::size_t c) noexcept {
  cutting& k = cuttings[c];
  if (k.next != k.end)
    settle(chunk_of(k.next), static_cast<std::uint32_t>((k.end - k.next) / stride_of(c)));
  k.next = k.end = nullptr;
}

// A block back to its chunk (only pooled builds cut blocks).
void give_back(void* block) noexcept { settle(chunk_of(block), 1); }

// Gives the thread's list `l` back to the chunks, leaving it empty (the
// depot is full, or the thread is exiting).
void free_list(block_list& l) noexcept {
  while (l.head != nullptr) give_back(std::exchange(l.head, *static_cast<void**>(l.head)));
  l.count = 0;
}

enum class thread_state : std::uint8_t { unregistered, registered, exited };
constinit thread_local thread_state state = thread_state::unregistered;

// Gives the thread's blocks back to their chunks when it exits, and lets
// go of the chunks it cuts.
struct janitor {
  bool armed = false;
  ~janitor() {
    state = thread_state::exited;
    for (std::size_t c = 0; c < block_classes; ++c) {
      free_list(block_lists[c]);
      block_lists[c].limit = 0;
      let_go(c);
    }
  }
};
thread_local janitor exit_cleanup;

// Opens the thread's lists, once its clean-up is registered (which is what
// touching a thread_local with a destructor does).
void register_thread() noexcept {
  exit_cleanup.armed = true;
  state = thread_state::registered;
  for (block_list& each : block_lists) each.limit = keep;
}

// The size class of a block of `size` bytes (size > 0); block_classes or
// more if it is too large to pool.
std::size_t class_of(std::size_t size) noexcept { return (size - 1) / block_granule; }

}  // namespace

constinit thread_local block_list block_lists[block_classes]{};

// The list of the block's size was empty, or it is too large to pool.
void* allocate_block_slowly(std::size_t size) {
  const std::size_t c = class_of(size);
  if (c >= block_classes) return ::operator new(size);
  // Only a registered thread takes a list: its exit gives it back.
  if (pooled && state == thread_state::unregistered) register_thread();
  if (!pooled) return ::operator new((c + 1) * block_granule);
  if (state == thread_state::registered) {
    if (take_list(c, block_lists[c])) return allocate_block(size);  // from the list just taken
    return cut(c);
  }
  // Exiting: its janitor has let go of its chunks already, so this block's
  // chunk is let go of at once (a destructor of another thread_local that
  // allocates is rare).
  void* const block = cut(c);
  let_go(c);
  return block;
}

// A free that found its list at its limit: full, or not yet open because
// the thread has no clean-up registered (its first free registers it,
// which is what touching a thread_local with a destructor does), or closed
// because the thread is exiting (a later thread-local destructor freeing a
// block), or never open (nothing pooled); or a block too large to pool.
void free_block_slowly(void* block, std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  if (!pooled || c >= block_classes) return ::operator delete(block);
  if (state == thread_state::unregistered) register_thread();
  block_list& l = block_lists[c];
  if (l.count >= l.limit) {
    // Exiting (limit 0): back to its chunk. Else the full list goes whole,
    // to the depot or, that full too, back to its chunks, and a new one
    // begins.
    if (l.limit == 0) return give_back(block);
    if (!give_list(c, l)) free_list(l);
  }
  ++l.count;
  l.head = ::new (block) void*{l.head};
}

std::size_t kept_blocks(std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  return pooled && c < block_classes ? block_lists[c].count : 0;
}

std::size_t block_keep_limit() noexcept { return pooled ? keep : 0; }

std::size_t depot_blocks(std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  return pooled && c < block_classes
             ? std::size_t{depot_of(c).count.load(std::memory_order_relaxed)} * keep
             : 0;
}

std::size_t block_chunks() noexcept { return chunks_held.load(std::memory_order_relaxed); }

std::size_t block_chunk_bytes() noexcept { return pooled ? chunk_bytes : 0; }

std::size_t depot_block_limit(std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  return pooled && c < block_classes ? std::size_t{depot_most(c)} * keep : 0;
}

}  // namespace tact::detail
