#include <ostream>

#include <tact/stats.hpp>

namespace tact {

std::ostream& operator<<(std::ostream& out, const worker_stats& s) {
  return out << "actors created " << s.actors_created << ", finished " << s.actors_finished
             << "; messages sent " << s.messages_sent << " (local " << s.local_sends
             << "), processed " << s.messages_processed << "; gulps " << s.gulps
             << " (average size " << s.average_gulp_size() << "), missed " << s.missed_gulps
             << "; steal attempts " << s.steal_attempts << " (no candidate "
             << s.steal_no_candidate << ", failed swaps " << s.steal_failed_swaps << "), steals "
             << s.steals << " (" << s.messages_stolen << " messages, average "
             << s.average_steal_size() << "); parks " << s.parks << ", wake-ups " << s.wakeups << "; dead letters "
             << s.dead_letters << "; suspended behaviours " << s.suspensions << " (fibers made " << s.fibers_made << "); batches given back " << s.batches_given_back
             << "; memory waits " << s.memory_waits
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
  for (std::size_t i = 0; i < s.workers.size(); ++i)
    out << "worker " << i << ": " << s.workers[i] << '\n';
  return out;
}

}  // namespace tact
