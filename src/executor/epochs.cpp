#include "executor/epochs.hpp"

namespace tact::detail {

epochs::epochs(std::uint32_t participants)
    : participants_{participants, [](std::size_t) { return padded<participant>{}; }} {}

epochs::~epochs() { clear(); }

void epochs::clear() noexcept {
  for (participant& p : participants_) {
    for (const retired_object& r : p.limbo) r.free(r.object);
    p.limbo.clear();
  }
  for (const retired_object& r : orphans_) r.free(r.object);
  orphans_.clear();
  have_orphans_.store(false, std::memory_order_relaxed);
}

void epochs::retire(std::uint32_t p, void* object, free_fn free) {
  participant& self = participants_[p];
  // The epoch is read after the unlink (both sequentially consistent).
  self.limbo.push_back({global_.load(std::memory_order_seq_cst), object, free});
  if (self.limbo.size() >= self.collect_at) collect(p);
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

std::uint64_t epochs::advance() noexcept {
  for (int step = 0; step < 2; ++step)
    if (!try_advance(global_.load(std::memory_order_seq_cst))) break;
  return global_.load(std::memory_order_seq_cst);
}

void epochs::free_safe(std::vector<retired_object>& objects, std::uint64_t now) noexcept {
  std::size_t kept = 0;
  for (const retired_object& r : objects) {
    if (r.epoch + 2 <= now)
      r.free(r.object);
    else
      objects[kept++] = r;
  }
  objects.resize(kept);
}

// Whoever gets the lock frees what it can; nobody waits for it.
void epochs::collect_orphans(std::uint64_t now) noexcept {
  if (!have_orphans_.load(std::memory_order_relaxed)) return;
  std::unique_lock guard{orphans_mutex_, std::try_to_lock};
  if (!guard.owns_lock()) return;
  free_safe(orphans_, now);
  have_orphans_.store(!orphans_.empty(), std::memory_order_relaxed);
}

std::size_t epochs::collect(std::uint32_t p) noexcept {
  participant& self = participants_[p];
  const std::uint64_t now = advance();
  free_safe(self.limbo, now);
  collect_orphans(now);
  self.collect_at = self.limbo.size() + collect_every;
  return self.limbo.size();
}

void epochs::abandon(std::uint32_t p) {
  participant& self = participants_[p];
  if (collect(p) == 0) return;
  std::lock_guard guard{orphans_mutex_};
  orphans_.insert(orphans_.end(), self.limbo.begin(), self.limbo.end());
  have_orphans_.store(true, std::memory_order_relaxed);
  self.limbo.clear();
  self.collect_at = collect_every;
}

}  // namespace tact::detail
