#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include <tact/detail/atomic.hpp>
#include <tact/detail/retired.hpp>

#include "support/assert.hpp"
#include "support/asymmetric_fence.hpp"
#include "support/fixed_array.hpp"
#include "support/padded.hpp"

namespace tact::detail {

// Epoch-based deferred reclamation for objects that workers read through
// shared pointers without counting references (replaced behaviours of
// transactional actors that may run on several workers: other workers may
// still be running them; an actor created serialized frees its own at
// once, see dispatch.cpp).
//
// A worker pins before it loads such a pointer and unpins only once it
// holds none; the executor pins lazily inside a gulp and unpins when the
// batch is done, so a dispatch pays nothing and a gulp one exchange. An
// object unlinked by a worker is retired with the epoch current after the
// unlink, and freed once the global epoch is two further on.
//
// Why that is safe: every pin, unlink, epoch read and announcement scan is
// sequentially consistent, so all of them sit in one total order. A worker
// that loaded the old pointer did so before the unlink, after its pin, and
// the pin announced an epoch no later than the one the object was retired
// with (E). The epoch moves from E + 1 to E + 2 only after a scan sees every
// pinned worker announce E + 1, which that worker does only when it pins
// again, after its batch: so E + 2 is reached only after it dropped the
// pointer. Unpinned workers (parked, between batches) never hold one.
//
// Chosen over reference counts on behaviours (two atomic read-modify-writes
// on one shared line per dispatch, contended exactly when an actor is hot)
// and hazard pointers (a full barrier per dispatch).
//
// A stalled epoch. A worker pinned for long holds back every object
// retired meanwhile: on a busy machine the OS deschedules a worker in the
// middle of its batch for milliseconds, while the other workers retire
// thousands of behaviours (tx_fibonacci: 20,000 at once, 2 MB). So each
// participant also marks the one object it reads under the pin
// (protect(): a hazard pointer, with the barrier moved to the reclaimer's
// side), and a participant whose limbo still holds stalled_most objects
// after a collect frees those that no participant marks, epochs or not:
//
//   reader (protect):  x = load();  in_use = x;  light fence;  x == load()?
//   reclaimer:         unlink (before retire);  heavy fence;  read in_use
//
// The two fences order as sequentially consistent ones would (see
// support/asymmetric_fence.hpp), so a reader that loaded an object before
// its unlink either has its mark seen by the reclaimer, or its second load
// comes after the unlink, sees another pointer, and the reader reads
// again. A mark stays until the reader's next protect(), which it calls
// only once it no longer uses the object. That holds for every pointer to
// a retirable object the engine reads: a dispatch reads its actor's
// behaviour through protect() and drops it before its next dispatch (a
// handler never waits; an on_commit action, which may, runs before the
// behaviour that staged it is retired, or holds a reference to it). The
// fallback costs a heavy fence (a system call that interrupts the
// process's other cores) per stalled_most retirements, and only while the
// epoch is stalled.
//
// A retired object waits on its own link (retired_link), in a list of its
// retirer's or in the shared one, so nothing here allocates: retiring
// happens where a commit can no longer fail.
class epochs {
 public:
  // Objects in a participant's limbo after a collect from which it frees
  // the unmarked ones (see "A stalled epoch" above): 1,024 behaviours are
  // about 100 KB.
  static constexpr std::size_t default_stalled_most = 1024;

  // `stalled_most`: see "A stalled epoch" above (tests make it small).
  explicit epochs(std::uint32_t participants, std::size_t stalled_most = default_stalled_most);
  // Frees everything still retired: call it when nobody is pinned.
  ~epochs();
  epochs(const epochs&) = delete;
  epochs& operator=(const epochs&) = delete;

  // ---- only by participant p, on its own thread ----

  // Pins p. Called again while pinned, at a point where p holds no pointer
  // read under the pin, it announces the current epoch if it has moved (a
  // load, and no store, when it has not).
  void pin(std::uint32_t p) noexcept {
    participant& self = participants_[p];
    const std::uint64_t now = global_.load(std::memory_order_seq_cst);
    if (self.pinned && self.announced.load(std::memory_order_relaxed) == now) return;
    self.pinned = true;
    self.announced.exchange(now, std::memory_order_seq_cst);
  }
  bool pinned(std::uint32_t p) const noexcept { return participants_[p].pinned; }
  // @pre p is pinned. Returns load() (a sequentially consistent load of a
  // shared pointer to a retirable object, or to a class derived from
  // retired_link), marked as in use by p until p's next protect(): the
  // object is freed neither by the epochs nor by the fallback for a
  // stalled epoch while the mark stays (see above).
  template <class Load>
  auto protect(std::uint32_t p, Load load) noexcept {
    atomic<retired_link*>& mark = participants_[p].in_use;
    auto* seen = load();
    for (;;) {
      // Release: what p did with the object it marked before happens
      // before the free of a reclaimer that reads the new mark.
      mark.store(seen, std::memory_order_release);
      light_fence();
      auto* const again = load();
      if (again == seen) return seen;
      seen = again;
    }
  }
  // @pre p is pinned.
  void unpin(std::uint32_t p) noexcept {
    participant& self = participants_[p];
    TACT_ASSERT(self.pinned, "a participant unpins only while pinned");
    self.pinned = false;
    self.announced.store(idle, std::memory_order_seq_cst);
  }

  // The object of `link` is unreachable for anyone who pins from now on;
  // link->free(link) runs once everyone pinned now has unpinned. May free
  // older objects. @pre link->free is set; the link is in no list.
  void retire(std::uint32_t p, retired_link* link) noexcept;

  // Advances the epoch as far as pinned participants allow (at most twice)
  // and frees p's objects that became safe. Returns how many remain.
  std::size_t collect(std::uint32_t p) noexcept;

  // Objects retired by p and not yet freed.
  std::size_t retired(std::uint32_t p) const noexcept { return participants_[p].limbo.size; }

  // p is going idle for a while (parking): what it cannot free now goes to
  // a shared list that the next collect() by anyone frees when it can.
  void abandon(std::uint32_t p) noexcept;

  // ---- when no participant runs (the workers have stopped) ----

  // Frees every retired object.
  void clear() noexcept;

 private:
  static constexpr std::uint64_t idle = ~std::uint64_t{0};
  // A participant collects once its limbo has grown by this many objects
  // since the last collect left it, so its limbo stays short without
  // scanning every worker on each retire, and a long pinned stretch (in
  // which nothing can be freed) rescans in linear total time.
  static constexpr std::size_t collect_every = 64;

  // Retired objects, linked in retirement order.
  struct limbo_list {
    limbo_list() noexcept = default;
    limbo_list(const limbo_list&) = delete;  // `last` points into it
    limbo_list& operator=(const limbo_list&) = delete;

    retired_link* first = nullptr;
    retired_link** last = &first;
    std::size_t size = 0;

    void append(retired_link* link) noexcept {
      *last = link;
      last = &link->next;
      ++size;
    }
    void append(limbo_list& other) noexcept;  // leaves `other` empty
    // Frees the objects for which safe(link) holds; keeps the rest, in
    // order.
    template <class Safe>
    void free_if(Safe safe) noexcept;
    // Frees what is safe given epoch `now` (all of it if `now` is
    // `everything`).
    void free_safe(std::uint64_t now) noexcept;
  };
  static constexpr std::uint64_t everything = ~std::uint64_t{0};

  struct participant {
    atomic<std::uint64_t> announced{idle};
    atomic<retired_link*> in_use{nullptr};  // protect()'s mark
    bool pinned = false;  // mirror of announced != idle, for its owner
    limbo_list limbo;
    std::size_t collect_at = collect_every;
  };

  bool try_advance(std::uint64_t seen) noexcept;
  std::uint64_t advance() noexcept;
  void collect_orphans(std::uint64_t now) noexcept;
  void free_unmarked(participant& self) noexcept;

  atomic<std::uint64_t> global_{0};
  fixed_array<padded<participant>> participants_;
  std::mutex orphans_mutex_;
  limbo_list orphans_;                // guarded by orphans_mutex_
  atomic<bool> have_orphans_{false};  // a hint, read without the lock
  const std::size_t stalled_most_;
  const bool can_fence_heavily_ = can_fence_heavily();
};

}  // namespace tact::detail
