#pragma once

#include <algorithm>
#include <cstdint>

namespace tact::detail {

// How many empty sweeps an idle worker spins before it parks, learnt from
// its own idle stretches. One worker's, never shared: no atomics.
//
// A spin pays when work comes before it ends: the worker takes it at
// once, where a parked one waits to be woken (tens of microseconds on a
// loaded machine). It costs a processor meanwhile, and on a machine with
// fewer processors than threads that want one, that processor is often
// the one the thread that makes the next work (a network thread, a client,
// another process) is waiting for: a round trip to another process took
// 1.3x as long at two workers with the full spin as with 128 sweeps
// (docs/performance.md, "An idle spin as long as the gaps it catches").
// So the budget follows the gaps:
//  * a stretch that ends in work after more than half the budget needed
//    it: the budget goes to twice that stretch, up to the configured spins
//    (system_config::idle_spins);
//  * a stretch that ends in a park caught nothing: the budget halves, down
//    to a floor that still lets a worker turn hungry and steal before it
//    parks (see pool_worker::loop);
//  * one stretch in probe_every after a park spins the whole configured
//    budget, so that gaps longer than a low budget are found: without it, a
//    budget at its floor would never see the work that a longer spin
//    catches.
// The configured yields (system_config::idle_yields) follow a full spin
// only: a yield gives the processor away, which the short spins are there
// to avoid.
class idle_spin {
 public:
  // The floor: twice the sweeps after which an idle worker first tries to
  // steal (defaults::steal_after), and far more than those after which it
  // turns hungry (defaults::hungry_after).
  static constexpr std::uint64_t floor = 128;
  static constexpr std::uint32_t probe_every = 32;

  idle_spin(std::uint64_t spins, std::uint64_t yields) noexcept
      : most_{spins},
        yields_{yields},
        low_{std::min(floor, spins)},
        budget_{spins},
        limit_{spins} {}

  // Whether the `sweeps`th empty sweep of this stretch spins (with a pause
  // instruction), and else whether it yields; once neither, the worker
  // parks.
  bool spins(std::uint64_t sweeps) const noexcept { return sweeps <= limit_; }
  bool yields(std::uint64_t sweeps) const noexcept {
    return limit_ == most_ && sweeps <= most_ + yields_;
  }

  // The stretch ended in work after `sweeps` empty sweeps (at least one).
  // Work found while yielding says nothing for the spin: the yield gave
  // the processor to the thread that made it.
  void caught(std::uint64_t sweeps) noexcept {
    if (sweeps > budget_ / 2 && sweeps <= limit_) budget_ = std::clamp(2 * sweeps, low_, most_);
    limit_ = budget_;
  }

  // The stretch ended in a park: a shorter spin next time, or a whole one
  // to probe.
  void parked() noexcept {
    budget_ = std::max(low_, budget_ / 2);
    limit_ = ++parks_ % probe_every == 0 ? most_ : budget_;
  }

  // The budget of the stretches that are not probes (for tests).
  std::uint64_t budget() const noexcept { return budget_; }

 private:
  const std::uint64_t most_;
  const std::uint64_t yields_;
  const std::uint64_t low_;
  std::uint64_t budget_;
  std::uint64_t limit_;  // this stretch's: budget_, or most_ for a probe
  std::uint32_t parks_ = 0;
};

}  // namespace tact::detail
