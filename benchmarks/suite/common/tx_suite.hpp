#pragma once

// What the transactional workloads (tx_*) share: the check that every
// message they sent committed exactly once, and nothing else happened to
// one. Results leave the actor world through an actor at its edge, one
// that never becomes: its handler runs exactly once per message, so it may
// write to main's memory, which main reads after await_quiescence().

#include <cstdint>
#include <string>

#include <tact/stats.hpp>
#include <tact/transactional.hpp>

#include "suite.hpp"

namespace suite::tx {

inline tact::worker_stats totals(const tact::actor_system& system) {
  return system.stats().total;
}

// Since `before`: exactly `messages` handlers committed, and no handler
// rolled back, no message went unmatched and no send was dropped. (A
// handler that lost a become race and ran again commits once.)
inline void check_commits(const tact::actor_system& system, const tact::worker_stats& before,
                          std::uint64_t messages) {
  const tact::worker_stats now = totals(system);
  const std::uint64_t commits = now.tx_commits - before.tx_commits;
  suite::check(commits == messages, std::to_string(commits) + " messages committed, expected " +
                                        std::to_string(messages));
  suite::check(now.tx_rollbacks == before.tx_rollbacks, "a handler rolled back");
  suite::check(now.tx_unmatched == before.tx_unmatched, "a message matched no handler");
  suite::check(now.tx_dropped == before.tx_dropped, "a message was sent to an empty reference");
}

}  // namespace suite::tx
