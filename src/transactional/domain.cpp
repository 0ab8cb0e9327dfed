#include "transactional/domain.hpp"

#include <stdexcept>
#include <string>

#include <tact/defaults.hpp>

#include "transactional/dispatch.hpp"

namespace tact::detail::tx {

const system_config& validated(const system_config& config) {
  if (config.collision_limit == 0)
    throw std::invalid_argument{
        "tact: system_config.collision_limit is 0; a transactional message must be allowed at "
        "least one become race before its actor is serialized (leave it unset for " +
        std::to_string(defaults::collision_limit) + ")"};
  return config;
}

domain::domain(executor& ex)
    : ex_{ex},
      stopping_{&stopping_flag(ex)},
      collision_limit_{config_of(ex).collision_limit},
      collision_bound_{config_of(ex).collision_bound},
      per_runner_{runner_count(ex), [](std::size_t) { return padded<dispatch_counts>{}; }} {
  on_discard(&deliver, &drop);
  on_discard(&deliver_run, &drop_run);
  keep_postponed(ex, {&retry_postponed, &refuse_postponed, this});
}

// Nothing reads the domain while this runs: the system has stopped, and a
// send from another thread racing its destruction breaks the rule this
// exists to catch.
void domain::orphan(std::unique_ptr<domain> d) noexcept {
  d->gone_.store(true, std::memory_order_relaxed);
  d->stopping_ = &d->gone_;
  let_go(d.release());
}

void domain::count_dropped() noexcept {
  if (runner* self = this_runner(ex_))
    counts(*self).dropped.add();
  else
    foreign_dropped_.fetch_add(1, std::memory_order_relaxed);
  count(ex_, tally::rejected);
}

void domain::add_to(system_stats& s) const noexcept {
  for (std::uint32_t r = 0; r < per_runner_.size(); ++r) {
    const dispatch_counts& c = per_runner_[r];
    const std::uint64_t plain = c.plain.get();
    const worker_stats counted{.tx_dispatches = c.dispatches.get() + plain,
                               .tx_commits = c.commits.get() + plain,
                               .tx_becomes = c.becomes.get(),
                               .tx_collisions = c.collisions.get(),
                               .tx_retries = c.retries.get(),
                               .tx_serializations = c.serializations.get(),
                               .tx_rollbacks = c.rollbacks.get(),
                               .tx_unmatched = c.unmatched.get(),
                               .tx_dropped = c.dropped.get()};
    // The executor lists the workers first, by runner index.
    if (r < s.workers.size()) s.workers[r] += counted;
    s.total += counted;
  }
  s.total.tx_dropped += foreign_dropped_.load(std::memory_order_relaxed);
}

}  // namespace tact::detail::tx
