#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/victims.hpp"

namespace tact::detail {

class executor;
class pool_worker;

// A pool worker's work stealing (Cforall thesis, "Stealing Mechanism"):
// which worker to rob, which of its queues is worth taking, and the swap.
// Only the owning worker's thread calls it; other thieves read only
// last_attempt().
class thief {
 public:
  thief(executor& owner, pool_worker& self, std::vector<std::vector<std::uint32_t>> victim_groups);

  // One attempt on a victim chosen by the steal policy; true if a queue
  // was taken (it is in one of our slots now).
  bool steal();
  // One attempt on worker `victim`.
  bool steal_from(std::uint32_t victim);
  // One attempt on each other worker, from a random one, until a queue is
  // taken; true if one was (a worker about to park).
  bool steal_stranded();
  // A worker, other than ours, with a queue worth stealing, if any (a
  // parked worker watching for stranded mail).
  std::optional<std::uint32_t> find_stranded_work() noexcept;
  // A busy worker's look at the others: from each one that is awake but
  // has not started a sweep for defaults::rescue_after, takes every queue
  // with mail that nobody processes, in its block and in the blocks it
  // covers for resting workers, while it has an idle queue of its own to
  // give in exchange. Returns how many it took.
  std::uint32_t rescue();

  // Any thread: when this thief last tried to steal (steady clock ticks),
  // for the longest-victim policy. Written only by its own worker.
  std::int64_t last_attempt() const noexcept {
    return last_attempt_.load(std::memory_order_relaxed);
  }

 private:
  template <class Take>
  std::optional<std::uint32_t> first_other(Take&& take);
  std::optional<std::uint32_t> worth_stealing(const pool_worker& victim) noexcept;
  bool stuck(const pool_worker& victim, std::chrono::nanoseconds still) noexcept;
  bool take(pool_worker& victim, std::uint32_t theirs, std::uint32_t ours);
  std::uint32_t slot_to_give() noexcept;
  std::optional<std::uint32_t> idle_slot_to_give() noexcept;

  executor& owner_;
  pool_worker& self_;
  victim_picker victims_;
  // Per worker, its sweep count when this thief last saw it change, and
  // when this thief saw it change (see stuck()).
  struct victim_progress {
    std::uint64_t sweeps = ~std::uint64_t{0};
    std::chrono::steady_clock::time_point since{};
  };
  std::vector<victim_progress> progress_;
  std::uint32_t give_ = 0;  // next own slot to offer in a swap
  std::atomic<std::int64_t> last_attempt_{0};
};

}  // namespace tact::detail
