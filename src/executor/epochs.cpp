#include "executor/epochs.hpp"

namespace tact::detail {

epochs::epochs(std::uint32_t participants, std::size_t stalled_most)
    : participants_{participants, [](std::size_t) { return padded<participant>{}; }},
      stalled_most_{stalled_most} {}

epochs::~epochs() { clear(); }

void epochs::limbo_list::append(limbo_list& other) noexcept {
  if (other.first == nullptr) return;
  *last = other.first;
  last = other.last;
  size += other.size;
  other.first = nullptr;
  other.last = &other.first;
  other.size = 0;
}

template <class Safe>
void epochs::limbo_list::free_if(Safe safe) noexcept {
  retired_link** at = &first;
  while (retired_link* link = *at) {
    if (safe(link)) {
      *at = link->next;  // read before free(), which ends the link
      --size;
      link->next = nullptr;
      link->free(link);
    } else {
      at = &link->next;
    }
  }
  last = at;
}

void epochs::limbo_list::free_safe(std::uint64_t now) noexcept {
  free_if([now](const retired_link* link) { return now == everything || link->epoch + 2 <= now; });
}

void epochs::clear() noexcept {
  for (participant& p : participants_) p.limbo.free_safe(everything);
  orphans_.free_safe(everything);
  have_orphans_.store(false, std::memory_order_relaxed);
}

void epochs::retire(std::uint32_t p, retired_link* link) noexcept {
  participant& self = participants_[p];
  // The epoch is read after the unlink (both sequentially consistent).
  link->epoch = global_.load(std::memory_order_seq_cst);
  link->next = nullptr;
  self.limbo.append(link);
  if (self.limbo.size >= self.collect_at) collect(p);
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

// Whoever gets the lock frees what it can; nobody waits for it.
void epochs::collect_orphans(std::uint64_t now) noexcept {
  if (!have_orphans_.load(std::memory_order_relaxed)) return;
  std::unique_lock guard{orphans_mutex_, std::try_to_lock};
  if (!guard.owns_lock()) return;
  orphans_.free_safe(now);
  have_orphans_.store(orphans_.first != nullptr, std::memory_order_relaxed);
}

// A stalled epoch (see epochs.hpp): every object of self's limbo was
// unlinked before self retired it, so before the heavy fence; a reader
// that could still use one has marked it by then, or will read again.
// A mark read later than the fence is no less safe: a reader marks an
// object unlinked before the fence only to see its second read fail.
void epochs::free_unmarked(participant& self) noexcept {
  heavy_fence();
  self.limbo.free_if([this](const retired_link* link) {
    for (const participant& p : participants_)
      // Acquire: what its reader did with this object before marking
      // another happens before the free.
      if (p.in_use.load(std::memory_order_acquire) == link) return false;
    return true;
  });
}

std::size_t epochs::collect(std::uint32_t p) noexcept {
  participant& self = participants_[p];
  const std::uint64_t now = advance();
  self.limbo.free_safe(now);
  if (self.limbo.size >= stalled_most_ && can_fence_heavily_) [[unlikely]]
    free_unmarked(self);
  collect_orphans(now);
  self.collect_at = self.limbo.size + collect_every;
  return self.limbo.size;
}

void epochs::abandon(std::uint32_t p) noexcept {
  participant& self = participants_[p];
  if (collect(p) == 0) return;
  std::lock_guard guard{orphans_mutex_};
  orphans_.append(self.limbo);
  have_orphans_.store(true, std::memory_order_relaxed);
  self.collect_at = collect_every;
}

}  // namespace tact::detail
