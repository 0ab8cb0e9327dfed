#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include <tact/export.hpp>

namespace tact::detail {

// Storage for objects made and freed once per message (transactional
// messages and behaviours, classic messages made by tact::send_new): a
// per-thread cache of small blocks. Any thread may free a block any thread
// allocated; it joins the freeing thread's cache, which keeps at most
// block_keep_limit() blocks per size and gives a full list to a depot
// shared by the threads (up to depot_block_limit(size)), where a thread
// whose cache is empty takes one. New blocks are cut from chunks of
// block_chunk_bytes(), back to back, one size per chunk (a 24-byte block
// takes 24 bytes, where the heap takes 32); what the depot has no room for
// goes back to its chunk, and a chunk whose blocks have all come back goes
// back to the heap. Blocks over 256 bytes come from the heap. A block is
// aligned for any type of its size whose alignment is ordinary.
inline void* allocate_block(std::size_t size);
inline void free_block(void* block, std::size_t size) noexcept;
// For tests: how many blocks of `size` bytes the calling thread keeps for
// reuse, and the most it keeps per size (0: every block goes to the heap,
// as under AddressSanitizer).
TACT_API std::size_t kept_blocks(std::size_t size) noexcept;
TACT_API std::size_t block_keep_limit() noexcept;
// For tests: how many blocks of `size` bytes the depot shared by the
// threads holds (whole lists that threads gave up), and the most it holds
// for that size (0 where nothing is pooled).
TACT_API std::size_t depot_blocks(std::size_t size) noexcept;
TACT_API std::size_t depot_block_limit(std::size_t size) noexcept;
// For tests: chunks held over all threads and sizes, and the size of one
// (0 where nothing is pooled).
TACT_API std::size_t block_chunks() noexcept;
TACT_API std::size_t block_chunk_bytes() noexcept;

// ---- the cache itself (block_pool.cpp); the common cases inline ----

// One size's free blocks on one thread, each holding the next's address.
struct block_list {
  void* head = nullptr;
  std::uint32_t count = 0;
  // The most it keeps: 0 until the thread has registered its clean-up
  // (its first free does), and always 0 where nothing is pooled, so that
  // every block then takes the slow path to the heap.
  std::uint32_t limit = 0;
};
// Sizes step by 8 bytes: the heap gives a block of 16k + 8 bytes a chunk
// 16 bytes smaller than one of 16k + 16 (glibc: the request and a word,
// rounded up to 16), so a 24-byte message (a three-word header, nothing
// else) takes 32 bytes of heap, not 48.
inline constexpr std::size_t block_granule = 8;
inline constexpr std::size_t block_classes = 32;  // blocks of 8, 16, ..., 256 bytes
// Trivially destructible, so reaching it costs no initialization check.
TACT_API extern constinit thread_local block_list block_lists[block_classes];

TACT_API void* allocate_block_slowly(std::size_t size);
TACT_API void free_block_slowly(void* block, std::size_t size) noexcept;

// A pop or a push on the thread's list of the block's size, when it has
// one to give or room to keep one.
inline void* allocate_block(std::size_t size) {
  if (const std::size_t c = (size - 1) / block_granule; c < block_classes) {
    block_list& l = block_lists[c];
    if (void* const block = l.head; block != nullptr) {
      l.head = *static_cast<void**>(block);
      --l.count;
      return block;
    }
  }
  return allocate_block_slowly(size);
}

inline void free_block(void* block, std::size_t size) noexcept {
  if (const std::size_t c = (size - 1) / block_granule; c < block_classes) {
    block_list& l = block_lists[c];
    if (l.count < l.limit) {
      l.head = ::new (block) void*{l.head};
      ++l.count;
      return;
    }
  }
  free_block_slowly(block, size);
}

}  // namespace tact::detail
