#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <tact/detail/tx_core.hpp>

// The per-thread cache transactional messages are allocated from: a block
// is never handed out twice while live, whatever thread freed it, and
// what is written into one live block never shows in another.
namespace {

using tact::detail::tx::allocate_message;
using tact::detail::tx::free_message;

struct block {
  unsigned char* bytes;
  std::size_t size;
  unsigned char mark;
};

std::vector<block> allocate_marked(std::size_t count, unsigned char first_mark) {
  std::vector<block> blocks;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t size = 1 + (i * 37) % 300;  // pooled sizes and larger ones
    auto* bytes = static_cast<unsigned char*>(allocate_message(size));
    const auto mark = static_cast<unsigned char>(first_mark + i);
    std::memset(bytes, mark, size);
    blocks.push_back({bytes, size, mark});
  }
  return blocks;
}

// Every block still holds its own mark, and no two blocks overlap.
bool intact(const std::vector<block>& blocks) {
  std::set<const unsigned char*> starts;
  for (const block& b : blocks) {
    if (!starts.insert(b.bytes).second) return false;
    for (std::size_t i = 0; i < b.size; ++i)
      if (b.bytes[i] != b.mark) return false;
  }
  return true;
}

void free_all(std::vector<block>& blocks) {
  for (const block& b : blocks) free_message(b.bytes, b.size);
  blocks.clear();
}

}  // namespace

TEST_CASE("freed message blocks are reused, never while still live") {
  std::vector<block> first = allocate_marked(2'000, 1);
  CHECK(intact(first));
  // Free every other block, then allocate as many again: reused blocks
  // must not overlap the ones still live.
  std::vector<block> kept;
  std::vector<block> released;
  for (std::size_t i = 0; i < first.size(); ++i) (i % 2 == 0 ? kept : released).push_back(first[i]);
  free_all(released);
  std::vector<block> second = allocate_marked(1'000, 7);
  std::vector<block> all = kept;
  all.insert(all.end(), second.begin(), second.end());
  CHECK(intact(all));
  free_all(kept);
  free_all(second);
}

TEST_CASE("blocks freed by another thread serve that thread's next messages") {
  constexpr std::size_t rounds = 20;
  constexpr std::size_t per_round = 1'000;
  for (std::size_t round = 0; round < rounds; ++round) {
    // Made here, freed there: the freeing thread keeps some for itself and
    // gives the rest back to the heap, and at its exit all of them.
    std::vector<block> made = allocate_marked(per_round, static_cast<unsigned char>(round));
    REQUIRE(intact(made));
    bool reuse_intact = false;
    std::thread consumer{[&] {
      free_all(made);
      std::vector<block> own = allocate_marked(per_round, 3);
      reuse_intact = intact(own);
      free_all(own);
    }};
    consumer.join();
    CHECK(reuse_intact);
  }
}
