#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <tact/steal_policy.hpp>

namespace tact::detail {

// Whom a thief tries to steal from next (Cforall thesis, "Victim Selection";
// the CAF locality thesis, section 4.1). One per worker, used only by its thread.
class victim_picker {
 public:
  // `groups`: this worker's nested victim groups g0 ⊂ g1 ⊂ ... ⊂ gk for
  // steal_policy::locality; with none, locality picks as random does.
  victim_picker(steal_policy policy, std::uint32_t self, std::uint32_t workers,
                std::vector<std::vector<std::uint32_t>> groups) noexcept
      : policy_{policy},
        self_{self},
        workers_{workers},
        groups_{std::move(groups)},
        attempts_left_{groups_.empty() ? 0 : static_cast<std::uint32_t>(groups_[0].size())},
        rng_{0x9E3779B97F4A7C15ull * (self + 1)} {}

  // The next victim, never this worker itself (needs two workers or more).
  // `last_attempt(w)`: when worker w last tried to steal (longest victim).
  template <class LastAttempt>
  std::uint32_t pick(LastAttempt last_attempt) noexcept {
    switch (policy_) {
      case steal_policy::longest_victim:
        return longest(last_attempt);
      case steal_policy::locality:
        if (!groups_.empty()) return nearest();
        [[fallthrough]];
      default:
        return other_than_self(random(workers_ - 1));
    }
  }

  // After a successful steal: locality starts again at the nearest group.
  void stole() noexcept {
    group_ = 0;
    attempts_left_ = groups_.empty() ? 0 : static_cast<std::uint32_t>(groups_[0].size());
  }

  // Uniform in [0, n), n > 0 (xorshift64*; fast, and plenty for this).
  std::uint32_t random(std::uint32_t n) noexcept {
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return static_cast<std::uint32_t>(((rng_ * 0x2545F4914F6CDD1Dull) >> 32) * n >> 32);
  }

 private:
  std::uint32_t other_than_self(std::uint32_t i) const noexcept { return i >= self_ ? i + 1 : i; }

  // The worker that has gone longest without trying to steal: the one
  // busy for longest. Thieves write only their own time, so this reads
  // other workers' lines but writes none of them.
  template <class LastAttempt>
  std::uint32_t longest(LastAttempt last_attempt) noexcept {
    std::uint32_t oldest = other_than_self(0);
    auto oldest_time = last_attempt(oldest);
    for (std::uint32_t w = oldest + 1; w < workers_; ++w) {
      if (w == self_) continue;
      if (const auto t = last_attempt(w); t < oldest_time) {
        oldest = w;
        oldest_time = t;
      }
    }
    return oldest;
  }

  // A random member of the current group; a group gets as many attempts as
  // it has members before the thief widens to the next, and the widest
  // group (every other worker) is kept until a steal succeeds.
  std::uint32_t nearest() noexcept {
    if (attempts_left_ == 0 && group_ + 1 < groups_.size()) {
      ++group_;
      attempts_left_ = static_cast<std::uint32_t>(groups_[group_].size());
    }
    if (attempts_left_ > 0) --attempts_left_;
    const std::vector<std::uint32_t>& group = groups_[group_];
    return group[random(static_cast<std::uint32_t>(group.size()))];
  }

  const steal_policy policy_;
  const std::uint32_t self_;
  const std::uint32_t workers_;
  const std::vector<std::vector<std::uint32_t>> groups_;
  std::size_t group_ = 0;
  std::uint32_t attempts_left_;
  std::uint64_t rng_;
};

}  // namespace tact::detail
