#pragma once

#include <cstddef>

#include <tact/export.hpp>

namespace tact::detail {

// Storage for objects made and freed once per message (transactional
// messages and behaviours, classic messages made by tact::send_new): a
// per-thread cache of small blocks in front of operator new. Any thread may
// free a block any thread allocated; it joins the freeing thread's cache,
// which keeps at most block_keep_limit() blocks per size and gives the
// rest to the heap. Aligned as operator new(size) is.
TACT_API void* allocate_block(std::size_t size);
TACT_API void free_block(void* block, std::size_t size) noexcept;
// For tests: how many blocks of `size` bytes the calling thread keeps for
// reuse, and the most it keeps per size (0: every block goes to the heap,
// as under AddressSanitizer).
TACT_API std::size_t kept_blocks(std::size_t size) noexcept;
TACT_API std::size_t block_keep_limit() noexcept;

}  // namespace tact::detail
