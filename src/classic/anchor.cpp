#include "classic/anchor.hpp"

#include <atomic>
#include <cstdint>

#include <tact/detail/classic_hooks.hpp>

#include "support/spinlock.hpp"

namespace tact::detail {

class anchor {
 public:
  explicit anchor(actor& a) noexcept : actor_{&a} {}

  std::atomic<std::uint32_t> refs{2};  // the actor's and the first caller's
  spinlock lock;
  // Written under the lock; read without it only as a hint (see open()).
  std::atomic<actor*> actor_;
};

namespace {

std::atomic<anchor*>& slot_of(actor& a) noexcept { return actor_access::anchor_slot(a); }

}  // namespace

// The slot holds the actor's own reference until the actor is destroyed,
// so an anchor loaded from it stays alive for as long as the actor does,
// finished or not. Like a send, this is for an actor not yet destroyed.
anchor* anchor_of(actor& a) {
  std::atomic<anchor*>& slot = slot_of(a);
  anchor* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    auto* fresh = new anchor{a};
    if (a.finished()) fresh->actor_.store(nullptr, std::memory_order_relaxed);
    // The first to install wins; a loser takes the winner's.
    if (slot.compare_exchange_strong(h, fresh, std::memory_order_acq_rel)) return fresh;
    delete fresh;
  }
  h->refs.fetch_add(1, std::memory_order_relaxed);
  return h;
}

void release(anchor* h) noexcept {
  if (h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete h;
}

actor* lock(anchor* h) noexcept {
  h->lock.lock();
  actor* a = h->actor_.load(std::memory_order_relaxed);
  if (a == nullptr) h->lock.unlock();
  return a;
}

void unlock(anchor* h) noexcept { h->lock.unlock(); }

bool open(const anchor* h) noexcept { return h->actor_.load(std::memory_order_acquire) != nullptr; }

void close_anchor(actor& a) noexcept {
  anchor* h = slot_of(a).load(std::memory_order_acquire);
  if (h == nullptr) return;
  h->lock.lock();
  h->actor_.store(nullptr, std::memory_order_release);
  h->lock.unlock();
}

void drop_anchor(actor& a) noexcept {
  close_anchor(a);
  if (anchor* h = slot_of(a).exchange(nullptr, std::memory_order_acq_rel)) release(h);
}

}  // namespace tact::detail
