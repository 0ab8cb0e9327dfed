#include <algorithm>
#include <array>
#include <bit>
#include <ostream>
#include <stdexcept>

#include <tact/stats.hpp>

namespace tact {

// worker_stats_counters names every counter once: worker_stats is nothing
// but counters, as many as the list has, and setting each through the
// list leaves none of them at zero.
static_assert(sizeof(worker_stats) == sizeof(std::uint64_t) * worker_stats_counters.size());
static_assert([] {
  worker_stats s;
  std::uint64_t value = 0;
  for (std::uint64_t worker_stats::*counter : worker_stats_counters) s.*counter = ++value;
  const auto all = std::bit_cast<std::array<std::uint64_t, worker_stats_counters.size()>>(s);
  return std::ranges::none_of(all, [](std::uint64_t v) { return v == 0; });
}());

system_stats operator-(const system_stats& later, const system_stats& earlier) {
  if (later.since != earlier.since || later.workers.size() != earlier.workers.size())
    throw std::invalid_argument{
        "tact: system_stats subtracted from statistics of another system (or from a difference "
        "that counts from another snapshot)"};
  if (earlier.taken > later.taken)
    throw std::invalid_argument{
        "tact: system_stats subtracted from a later snapshot; write later - earlier"};
  system_stats d = later;
  d.since = earlier.taken;
  d.total -= earlier.total;
  for (std::size_t i = 0; i < d.workers.size(); ++i) d.workers[i] -= earlier.workers[i];
  return d;
}

std::ostream& operator<<(std::ostream& out, const worker_stats& s) {
  return out << "actors created " << s.actors_created << ", finished " << s.actors_finished
             << "; messages sent " << s.messages_sent << " (local " << s.local_sends
             << "), processed " << s.messages_processed << "; gulps " << s.gulps
             << " (average size " << s.average_gulp_size() << "), missed " << s.missed_gulps
             << "; steal attempts " << s.steal_attempts << " (no candidate "
             << s.steal_no_candidate << ", failed swaps " << s.steal_failed_swaps << "), steals "
             << s.steals << " (rescues " << s.rescues << ", " << s.messages_stolen << " messages, average "
             << s.average_steal_size() << "); parks " << s.parks << ", wake-ups " << s.wakeups << " (rests " << s.rests << "); dead letters "
             << s.dead_letters << "; suspended behaviours " << s.suspensions << " (resumed "
             << s.resumptions << ", fibers made " << s.fibers_made << "); batches given back " << s.batches_given_back
             << "; claims " << s.claims
             << "; memory waits " << s.memory_waits << "; sends to full mailboxes: waited "
             << s.sends_waited << ", over the bound " << s.sends_over_bound << ", dropped "
             << s.sends_dropped
             << "; transactional: dispatched " << s.tx_dispatches
             << ", committed " << s.tx_commits << " (becomes " << s.tx_becomes
             << "), collisions " << s.tx_collisions << ", retries " << s.tx_retries
             << ", serialized " << s.tx_serializations << ", rolled back " << s.tx_rollbacks
             << ", unmatched " << s.tx_unmatched << ", to empty references " << s.tx_dropped
             << "; sends rejected " << s.messages_rejected << ", discarded at stop "
             << s.messages_discarded;
}

std::ostream& operator<<(std::ostream& out, const system_stats& s) {
  out << "total: " << s.total << '\n';
  out << "counted over " << s.interval().count() << " s; now " << s.queued << " queued, "
      << s.suspended << " waiting, " << s.live_actors << " actors alive\n";
  for (std::size_t i = 0; i < s.workers.size(); ++i) {
    out << "worker " << i << ": " << s.workers[i];
    if (i < s.load.size())
      out << "; now " << s.load[i].queued << " queued, " << s.load[i].suspended << " waiting"
          << (s.load[i].resting ? ", resting" : s.load[i].parked ? ", parked" : "");
    out << '\n';
  }
  return out;
}

}  // namespace tact
