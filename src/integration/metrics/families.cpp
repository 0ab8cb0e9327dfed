#include "integration/metrics/families.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace tact::detail::metrics {
namespace {

struct exported_counter {
  std::uint64_t worker_stats::*field;
  const char* name;
  const char* help;
};

// Each counter of worker_stats, as Prometheus names it.
constexpr std::array<exported_counter, worker_stats_counters.size()> counters{{
    {&worker_stats::actors_created, "tact_actors_created_total", "Classic actors made."},
    {&worker_stats::actors_finished, "tact_actors_finished_total", "Classic actors finished."},
    {&worker_stats::messages_sent, "tact_messages_sent_total", "Envelopes queued by sends."},
    {&worker_stats::local_sends, "tact_local_sends_total",
     "Sends appended to the batch in progress."},
    {&worker_stats::messages_processed, "tact_messages_processed_total",
     "Envelopes run, those that were dropped at delivery included."},
    {&worker_stats::gulps, "tact_gulps_total", "Work queues taken whole."},
    {&worker_stats::gulped_messages, "tact_gulped_messages_total", "Envelopes taken by gulps."},
    {&worker_stats::missed_gulps, "tact_missed_gulps_total",
     "Gulps that found their queue processed elsewhere."},
    {&worker_stats::steal_attempts, "tact_steal_attempts_total", "Victims looked at by thieves."},
    {&worker_stats::steal_no_candidate, "tact_steal_no_candidate_total",
     "Steal attempts that found no queue worth taking."},
    {&worker_stats::steal_failed_swaps, "tact_steal_failed_swaps_total",
     "Steal attempts whose swap lost a race."},
    {&worker_stats::steals, "tact_steals_total", "Work queues stolen."},
    {&worker_stats::rescues, "tact_rescues_total",
     "Queues a busy worker took from a worker whose thread had stopped sweeping."},
    {&worker_stats::messages_stolen, "tact_messages_stolen_total",
     "Envelopes queued in the work queues stolen."},
    {&worker_stats::parks, "tact_parks_total", "Times a worker parked for lack of work."},
    {&worker_stats::wakeups, "tact_wakeups_total", "Times a parked worker was woken."},
    {&worker_stats::rests, "tact_rests_total",
     "Times a worker was stood down while message-bound work ran on fewer workers."},
    {&worker_stats::dead_letters, "tact_dead_letters_total",
     "Messages sent to, or delivered after, a finished actor."},
    {&worker_stats::messages_rejected, "tact_messages_rejected_total",
     "Sends refused before they were queued."},
    {&worker_stats::messages_discarded, "tact_messages_discarded_total",
     "Envelopes dropped unrun at stop, or with their sponsor."},
    {&worker_stats::suspensions, "tact_suspensions_total",
     "Behaviours suspended while they waited in an ask."},
    {&worker_stats::resumptions, "tact_resumptions_total",
     "Suspended behaviours resumed once their wait was over."},
    {&worker_stats::fibers_made, "tact_fibers_made_total", "Fibers made for behaviours that wait."},
    {&worker_stats::batches_given_back, "tact_batches_given_back_total",
     "Batches cut short, the rest left for their queue's next turn."},
    {&worker_stats::claims, "tact_claims_total",
     "Idle queues a worker sent to and ran next itself."},
    {&worker_stats::memory_waits, "tact_memory_waits_total",
     "Pieces of work that waited for memory."},
    {&worker_stats::sends_waited, "tact_sends_waited_total",
     "Sends that waited for room in a full mailbox."},
    {&worker_stats::sends_over_bound, "tact_sends_over_bound_total",
     "Sends that went past a full mailbox's bound without waiting."},
    {&worker_stats::sends_dropped, "tact_sends_dropped_total",
     "Messages dropped by a full mailbox's drop policy."},
    {&worker_stats::tx_dispatches, "tact_tx_dispatches_total", "Transactional envelopes run."},
    {&worker_stats::tx_commits, "tact_tx_commits_total", "Transactional handlers committed."},
    {&worker_stats::tx_becomes, "tact_tx_becomes_total", "Commits with a become."},
    {&worker_stats::tx_collisions, "tact_tx_collisions_total",
     "Becomes that lost the compare-and-swap."},
    {&worker_stats::tx_retries, "tact_tx_retries_total",
     "Transactional handlers run again after a collision."},
    {&worker_stats::tx_serializations, "tact_tx_serializations_total",
     "Transactional actors serialized by collisions."},
    {&worker_stats::tx_rollbacks, "tact_tx_rollbacks_total",
     "Transactional handlers that threw and were rolled back."},
    {&worker_stats::tx_unmatched, "tact_tx_unmatched_total",
     "Transactional messages no handler matched."},
    {&worker_stats::tx_dropped, "tact_tx_dropped_total",
     "Transactional sends to an empty reference."},
}};
static_assert(
    [] {
      for (std::size_t i = 0; i < counters.size(); ++i)
        if (counters[i].field != worker_stats_counters[i]) return false;
      return true;
    }(),
    "each counter of worker_stats is exported, in the order of worker_stats_counters");

// The label value of the threads outside the pool.
constexpr const char* outside = "outside";

prometheus::ClientMetric sample(const std::string& worker) {
  prometheus::ClientMetric m;
  m.label.push_back({"worker", worker});
  return m;
}

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type) {
  return {name, help, type, {}};
}

}  // namespace

std::vector<prometheus::MetricFamily> families(const system_stats& s) {
  std::vector<std::string> workers;
  for (std::size_t i = 0; i < s.workers.size(); ++i) workers.push_back(std::to_string(i));
  // What the workers did not count themselves.
  worker_stats beyond = s.total;
  for (const worker_stats& w : s.workers) beyond -= w;

  std::vector<prometheus::MetricFamily> out;
  out.reserve(counters.size() + 4);
  for (const exported_counter& c : counters) {
    prometheus::MetricFamily& f =
        out.emplace_back(family(c.name, c.help, prometheus::MetricType::Counter));
    for (std::size_t i = 0; i < s.workers.size(); ++i)
      f.metric.emplace_back(sample(workers[i])).counter.value =
          static_cast<double>(s.workers[i].*c.field);
    f.metric.emplace_back(sample(outside)).counter.value = static_cast<double>(beyond.*c.field);
  }

  // The gauges: the workers' share of the system's, the rest outside.
  const auto gauge = [&](const char* name, const char* help, std::uint64_t whole,
                         std::uint64_t worker_load::*field) {
    prometheus::MetricFamily& f =
        out.emplace_back(family(name, help, prometheus::MetricType::Gauge));
    std::uint64_t rest = whole;
    for (std::size_t i = 0; i < s.load.size(); ++i) {
      const std::uint64_t v = s.load[i].*field;
      f.metric.emplace_back(sample(workers[i])).gauge.value = static_cast<double>(v);
      rest -= v;
    }
    f.metric.emplace_back(sample(outside)).gauge.value = static_cast<double>(rest);
  };
  gauge("tact_queued_messages", "Envelopes waiting in work queues, not yet taken by a gulp.",
        s.queued, &worker_load::queued);
  gauge("tact_suspended_behaviours", "Behaviours waiting in an ask now.", s.suspended,
        &worker_load::suspended);

  prometheus::MetricFamily& parked =
      out.emplace_back(family("tact_worker_parked", "1 while the worker sleeps for lack of work.",
                              prometheus::MetricType::Gauge));
  for (std::size_t i = 0; i < s.load.size(); ++i)
    parked.metric.emplace_back(sample(workers[i])).gauge.value = s.load[i].parked ? 1.0 : 0.0;

  prometheus::MetricFamily& resting = out.emplace_back(
      family("tact_worker_resting",
             "1 while the worker is stood down, message-bound work running on fewer workers.",
             prometheus::MetricType::Gauge));
  for (std::size_t i = 0; i < s.load.size(); ++i)
    resting.metric.emplace_back(sample(workers[i])).gauge.value = s.load[i].resting ? 1.0 : 0.0;

  out.emplace_back(family("tact_live_actors", "Classic actors made and not finished yet.",
                          prometheus::MetricType::Gauge))
      .metric.emplace_back()
      .gauge.value = static_cast<double>(s.live_actors);
  return out;
}

}  // namespace tact::detail::metrics
