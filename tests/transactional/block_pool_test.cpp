#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <tact/detail/block_pool.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/message.hpp>

// The per-thread cache transactional messages and behaviours are allocated
// from: a block is never handed out twice while live, whatever thread freed
// it, and what is written into one live block never shows in another; a
// freed block is reused first; a thread keeps a bounded number, whoever
// allocated them. Under AddressSanitizer nothing is kept (every block goes
// to the heap), and the tests of reuse check only that.
namespace {

using tact::detail::allocate_block;
using tact::detail::block_chunk_bytes;
using tact::detail::block_chunks;
using tact::detail::block_keep_limit;
using tact::detail::depot_block_limit;
using tact::detail::depot_blocks;
using tact::detail::free_block;
using tact::detail::kept_blocks;

constexpr std::size_t largest_pooled = 256;
constexpr std::size_t granule = tact::detail::block_granule;

// Blocks the calling thread keeps, over every pooled size.
std::size_t kept_in_all_sizes() {
  std::size_t total = 0;
  for (std::size_t size = granule; size <= largest_pooled; size += granule) total += kept_blocks(size);
  return total;
}

struct block {
  unsigned char* bytes;
  std::size_t size;
  unsigned char mark;
};

std::vector<block> allocate_marked(std::size_t count, unsigned char first_mark) {
  std::vector<block> blocks;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t size = 1 + (i * 37) % 300;  // pooled sizes and larger ones
    auto* bytes = static_cast<unsigned char*>(allocate_block(size));
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
  for (const block& b : blocks) free_block(b.bytes, b.size);
  blocks.clear();
}

}  // namespace

TEST_CASE("freed blocks are reused, never while still live") {
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

TEST_CASE("blocks freed by another thread serve that thread's next allocations") {
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

TEST_CASE("a freed block is the next one handed out for its size") {
  if (block_keep_limit() == 0) return;  // nothing pooled
  void* a = allocate_block(36);
  free_block(a, 36);
  void* b = allocate_block(40);  // same size class, 33 to 40 bytes
  CHECK(b == a);
  free_block(b, 40);
}

TEST_CASE("a thread keeps at most the limit of freed blocks per size, the rest go elsewhere") {
  const std::size_t limit = block_keep_limit();
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < 3 * limit + 100; ++i) blocks.push_back(allocate_block(64));
  for (void* b : blocks) free_block(b, 64);
  // Each time the list was full it went whole to the shared depot (or, the
  // depot full, to the heap), and a new one began.
  CHECK(kept_blocks(64) <= limit);
  CHECK(kept_blocks(64) == (limit == 0 ? 0 : blocks.size() % limit));
  CHECK(kept_blocks(largest_pooled + 1) == 0);  // never pooled
}

TEST_CASE("blocks a consumer thread frees serve a producer thread, a whole list at a time") {
  const std::size_t limit = block_keep_limit();
  if (limit == 0) return;  // nothing pooled
  constexpr std::size_t size = 176;
  // Whatever earlier tests left in the depot for this size is taken first,
  // and held, so that what the producer gets below can only be the
  // consumer's.
  std::vector<void*> earlier;
  std::thread drain{[&] {
    const std::size_t left = depot_blocks(size);
    for (std::size_t i = 0; i < left; ++i) earlier.push_back(allocate_block(size));
  }};
  drain.join();
  std::vector<void*> made;
  std::thread producer{[&] {
    for (std::size_t i = 0; i < 2 * limit; ++i) made.push_back(allocate_block(size));
  }};
  producer.join();
  const std::set<void*> freed(made.begin(), made.end());
  std::thread consumer{[&] {
    for (void* b : made) free_block(b, size);  // its list fills, and goes to the depot
  }};
  consumer.join();
  std::vector<void*> again;
  std::thread second_producer{[&] {
    for (std::size_t i = 0; i < limit; ++i) again.push_back(allocate_block(size));
  }};
  second_producer.join();
  std::size_t reused = 0;
  for (void* b : again) reused += freed.count(b);
  CHECK(reused == limit);  // one whole list, none from the heap
  for (void* b : again) free_block(b, size);
  for (void* b : earlier) free_block(b, size);
}

TEST_CASE("a burst freed on one thread serves the next burst made on another, not the heap") {
  // A producer muted by a bounded mailbox has tens of thousands of
  // messages in flight, freed and made again in waves (tx_counting_bounded:
  // 32,768 blocks of 32 bytes). The depot takes such a wave whole: 2 MiB
  // of blocks per size. With 4 lists per size it took 1,024 of them and
  // the heap the rest.
  const std::size_t limit = block_keep_limit();
  if (limit == 0) return;  // nothing pooled
  constexpr std::size_t size = 32;
  constexpr std::size_t wave = 32'768;
  CHECK(depot_block_limit(size) * size >= std::size_t{2} << 20);
  CHECK(depot_block_limit(largest_pooled) >= 4 * limit);
  // Earlier tests' lists are taken out of the depot first (and held), so
  // that the counts below are the wave's.
  std::vector<void*> earlier;
  std::vector<void*> made;
  std::thread producer{[&] {
    const std::size_t left = depot_blocks(size);
    for (std::size_t i = 0; i < left; ++i) earlier.push_back(allocate_block(size));
    for (std::size_t i = 0; i < wave; ++i) made.push_back(allocate_block(size));
  }};
  producer.join();
  REQUIRE(depot_blocks(size) == 0);
  const std::set<void*> freed(made.begin(), made.end());
  std::thread consumer{[&] {
    for (void* b : made) free_block(b, size);
  }};
  consumer.join();
  // Every list the consumer filled went to the depot, but its last: a list
  // goes once a block finds it full, and the thread gave that one to the
  // heap when it ended.
  const std::size_t given = (wave - 1) / limit * limit;
  CHECK(depot_blocks(size) == given);
  std::vector<void*> again;
  std::thread second_producer{[&] {
    for (std::size_t i = 0; i < given; ++i) again.push_back(allocate_block(size));
  }};
  second_producer.join();
  std::size_t reused = 0;
  for (void* b : again) reused += freed.count(b);
  CHECK(reused == again.size());
  CHECK(depot_blocks(size) == 0);
  for (void* b : again) free_block(b, size);
  for (void* b : earlier) free_block(b, size);
}

TEST_CASE("blocks freed by another thread join the freeing thread's cache, not the allocating one's") {
  const std::size_t limit = block_keep_limit();
  std::vector<void*> made;
  for (std::size_t i = 0; i < limit / 2; ++i) made.push_back(allocate_block(200));
  const std::size_t kept_here = kept_blocks(200);
  std::size_t kept_there_before = 0;
  std::size_t kept_there_after = 0;
  std::thread consumer{[&] {
    kept_there_before = kept_blocks(200);
    for (void* b : made) free_block(b, 200);
    kept_there_after = kept_blocks(200);
  }};
  consumer.join();
  CHECK(kept_blocks(200) == kept_here);
  CHECK(kept_there_before == 0);
  CHECK(kept_there_after == (limit == 0 ? 0 : made.size()));
}

TEST_CASE("a behaviour's closure is allocated from the block cache and freed back to it") {
  if (block_keep_limit() == 0) return;  // nothing pooled
  const auto make = [](std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    return tact::tx::behaviour{[a, b, c](int) { (void)(a + b + c); }};
  };
  // On a thread of its own, whose cache starts empty.
  std::size_t after_release = 0;
  std::size_t while_held = 0;
  std::size_t after_again = 0;
  std::thread fresh{[&] {
    make(1, 2, 3);  // built and released: its block is kept
    after_release = kept_in_all_sizes();
    {
      tact::tx::behaviour again = make(4, 5, 6);  // takes the kept block
      while_held = kept_in_all_sizes();
    }
    after_again = kept_in_all_sizes();
  }};
  fresh.join();
  // The thread may have taken a whole list from the depot (see
  // block_pool.cpp) for its first block: counted relative to that.
  CHECK(after_release >= 1);
  CHECK(while_held == after_release - 1);
  CHECK(after_again == after_release);
}

TEST_CASE("a message's header is three words: an empty one takes 24 bytes, a word more 32") {
  // What a staged or queued message costs in memory: its type (which also
  // destroys it, and marks a request in a spare bit), its target and the
  // link of a transaction's chain, then the elements. A burst of ten
  // million staged sends holds ten million of these at once, each in a
  // block of its own size (see below).
  struct increment {};
  CHECK(sizeof(tact::tx::message) == 3 * sizeof(void*));
  CHECK(sizeof(tact::tx::message_of<increment>) == 24);
  CHECK(sizeof(tact::tx::message_of<int>) <= 32);
  CHECK(sizeof(tact::tx::message_of<std::int64_t>) <= 32);
  CHECK(sizeof(tact::tx::message_of<tact::tx::actor_ref, int>) <= 40);
}

namespace {

// Takes out of the depot (on a thread of its own, which then exits) every
// list earlier tests left there for `size`, so that new blocks of that
// size are cut; the blocks are held in `held` until the caller frees them.
void drain_depot(std::size_t size, std::vector<void*>& held) {
  std::thread drain{[&] {
    const std::size_t left = depot_blocks(size);
    for (std::size_t i = 0; i < left; ++i) held.push_back(allocate_block(size));
  }};
  drain.join();
}

}  // namespace

TEST_CASE("new blocks are cut back to back at their own size: a 24-byte message takes 24 bytes") {
  // tx_counting's ten million increments in flight: 229 MiB of blocks, where
  // the heap's 32-byte chunks for them took 305 (more than CAF's peak).
  if (block_keep_limit() == 0) return;  // nothing pooled
  constexpr std::size_t size = 24;
  constexpr std::size_t count = 20'000;
  std::vector<void*> earlier;
  drain_depot(size, earlier);
  std::vector<std::uintptr_t> made;
  std::thread fresh{[&] {
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < count; ++i) blocks.push_back(allocate_block(size));
    for (void* b : blocks) made.push_back(reinterpret_cast<std::uintptr_t>(b));
    for (void* b : blocks) free_block(b, size);
  }};
  fresh.join();
  // Consecutive blocks are 24 bytes apart but where a new chunk begins.
  std::size_t apart = 0;
  for (std::size_t i = 1; i < made.size(); ++i) apart += made[i] - made[i - 1] == size;
  const std::size_t per_chunk = (block_chunk_bytes() - 64) / size;
  CHECK(apart >= count - 1 - (count / per_chunk + 1));
  for (void* b : earlier) free_block(b, size);
}

TEST_CASE("a burst's chunks go back to the heap once its blocks are freed") {
  // A burst does not pin its peak: what the depot has no room for goes
  // back to its chunk, and a chunk all of whose blocks came back is
  // freed, on whichever thread freed its last block.
  if (block_keep_limit() == 0) return;  // nothing pooled
  constexpr std::size_t size = 40;
  constexpr std::size_t count = 400'000;  // 16 MB
  std::vector<void*> earlier;
  drain_depot(size, earlier);
  const std::size_t before = block_chunks();
  std::vector<void*> made;
  std::thread producer{[&] {
    for (std::size_t i = 0; i < count; ++i) made.push_back(allocate_block(size));
  }};
  producer.join();
  const std::size_t at_peak = block_chunks();
  CHECK(at_peak - before >= count * size / block_chunk_bytes());
  CHECK(at_peak - before <= count * size / block_chunk_bytes() + 2);
  std::thread consumer{[&] {
    for (void* b : made) free_block(b, size);
  }};
  consumer.join();
  // What the depot keeps (2 MiB of blocks, the first ones freed, cut one
  // after the other) pins a few chunks; the rest are gone.
  const std::size_t pinned = depot_blocks(size) * size / block_chunk_bytes() + 2;
  CHECK(block_chunks() <= before + pinned);
  for (void* b : earlier) free_block(b, size);
}

TEST_CASE("eight threads cut, free and pass on blocks of every size: none is lost or shared") {
  // Blocks of every pooled size made on one thread and freed on another,
  // while every thread cuts from chunks of its own and gives blocks back
  // to chunks other threads cut: each block keeps its mark until freed,
  // and once the threads are gone no chunk is held but what the depot's
  // lists pin. Replayable: the seed is printed.
  if (block_keep_limit() == 0) return;  // nothing pooled
  constexpr std::size_t threads = 8;
  constexpr std::size_t rounds = 40;
  constexpr std::size_t per_round = 3'000;
  const std::uint32_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::vector<std::vector<void*>> earlier(largest_pooled / granule);
  for (std::size_t size = granule, i = 0; size <= largest_pooled; size += granule, ++i)
    drain_depot(size, earlier[i]);
  const std::size_t before = block_chunks();
  std::mutex lock;
  std::vector<std::vector<block>> passed(threads);  // what thread i is to check and free
  std::atomic<std::size_t> bad{0};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::minstd_rand random{seed + static_cast<std::uint32_t>(t)};
      for (std::size_t round = 0; round < rounds; ++round) {
        std::vector<block> mine;
        for (std::size_t i = 0; i < per_round; ++i) {
          const std::size_t size = 1 + random() % largest_pooled;
          auto* bytes = static_cast<unsigned char*>(allocate_block(size));
          const auto mark = static_cast<unsigned char>(random());
          std::memset(bytes, mark, size);
          mine.push_back({bytes, size, mark});
        }
        std::vector<block> theirs;
        {
          const std::lock_guard guard{lock};
          passed[(t + 1 + round) % threads].insert(passed[(t + 1 + round) % threads].end(),
                                                   mine.begin(), mine.end());
          theirs.swap(passed[t]);
        }
        if (!intact(theirs)) bad.fetch_add(1);
        free_all(theirs);
      }
    });
  }
  for (std::thread& each : pool) each.join();
  for (std::vector<block>& left : passed) {
    CHECK(intact(left));
    free_all(left);
  }
  CHECK(bad.load() == 0);
  // The blocks freed here went to this thread's lists, the rest to the
  // depot or to their chunks; each list of `keep` blocks pins at most as
  // many chunks.
  std::size_t listed = 0;
  for (std::size_t size = granule; size <= largest_pooled; size += granule)
    listed += depot_blocks(size) + kept_blocks(size);
  CHECK(block_chunks() <= before + listed);
  for (std::size_t size = granule, i = 0; size <= largest_pooled; size += granule, ++i)
    for (void* b : earlier[i]) free_block(b, size);
}
