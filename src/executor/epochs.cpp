#include "executor/epochs.hpp"

namespace tact::detail {

epochs::epochs(std::uint32_t participants)
    : participants_{participants, [](std::size_t) { return padded<participant>{}; }} {}

epochs::~epochs() {
  for (participant& p : participants_)
    for (const retired_object& r : p.limbo) r.free(r.object);
}

void epochs::retire(std::uint32_t p, void* object, free_fn free) {
  participant& self = participants_[p];
  // The epoch is read after the unlink (both sequentially consistent).
  self.limbo.push_back({global_.load(std::memory_order_seq_cst), object, free});
  if (self.limbo.size() % collect_every == 0) collect(p);
}

// The epoch may move on from `seen` once every participant is idle or has
// announced `seen`: none of them can still hold a pointer unlinked before
// `seen - 1` was current.
bool epochs::try_advance(std::uint64_t seen) noexcept {
  for (const participant& p : participants_) {
    const std::uint64_t a = p.announced.load(std::memory_order_seq_cst);
    if (a != idle && a != seen) return false;
  }
  // Failing means someone else advanced it: progress all the same.
  global_.compare_exchange_strong(seen, seen + 1, std::memory_order_seq_cst);
  return true;
}

std::size_t epochs::collect(std::uint32_t p) noexcept {
  participant& self = participants_[p];
  if (self.limbo.empty()) return 0;
  for (int step = 0; step < 2; ++step)
    if (!try_advance(global_.load(std::memory_order_seq_cst))) break;
  const std::uint64_t now = global_.load(std::memory_order_seq_cst);
  std::size_t kept = 0;
  for (const retired_object& r : self.limbo) {
    if (r.epoch + 2 <= now)
      r.free(r.object);
    else
      self.limbo[kept++] = r;
  }
  self.limbo.resize(kept);
  return kept;
}

}  // namespace tact::detail
