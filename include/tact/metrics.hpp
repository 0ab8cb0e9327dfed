// A system's statistics for monitoring systems: an HTTP endpoint serving
// them in the Prometheus text format, for Prometheus (or anything that
// reads the format) to scrape. In the tact-metrics library, which is built
// where prometheus-cpp is found; the engine itself does not depend on it.
// Nothing listens unless a program makes a metrics_exposer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <tact/actor_system.hpp>
#include <tact/defaults.hpp>
#include <tact/export.hpp>

namespace tact {

// Where a metrics_exposer listens, and what it serves.
struct metrics_config {
  // "address:port". Port 0 takes any free port (see metrics_exposer::port()).
  std::string address{defaults::metrics_address};
  // The path a scrape asks for.
  std::string path{defaults::metrics_path};
};

// Serves a system's statistics over HTTP. Every scrape reads
// `system.stats()` afresh: the engine counts nothing for it, and between
// scrapes it costs nothing. A scrape shows, per worker (label worker="0",
// "1", ..., and worker="outside" for the threads outside the pool:
// sponsors, helping askers, other threads), so that a series summed over
// `worker` is the system's total:
//
//   tact_<counter>_total        each counter of worker_stats, e.g.
//                               tact_messages_processed_total,
//                               tact_steals_total, tact_tx_rollbacks_total
//   tact_queued_messages        envelopes waiting in its queues (gauge)
//   tact_suspended_behaviours   behaviours waiting in an ask (gauge)
//   tact_worker_parked          1 while it sleeps for lack of work (no
//                               "outside")
//
// and tact_live_actors, the classic actors alive. A worker's load is the
// rate of its tact_messages_processed_total, its tact_queued_messages
// and how often it is parked.
class TACT_API metrics_exposer {
 public:
  // Listens, on two threads of its own that run the scrapes (each scrape
  // allocates its text). Throws std::runtime_error if it cannot (the port
  // is taken, the address is not one of this machine's). From any thread;
  // `system` must outlive the exposer.
  explicit metrics_exposer(const actor_system& system, const metrics_config& config = {});
  // Stops listening and returns once its threads have ended: at once if
  // it never served a scrape, else within a couple of seconds.
  ~metrics_exposer();
  metrics_exposer(const metrics_exposer&) = delete;
  metrics_exposer& operator=(const metrics_exposer&) = delete;

  // The port it listens on: the configured one, or the one it took for
  // port 0. Any thread.
  std::uint16_t port() const noexcept;

 private:
  struct server;
  std::unique_ptr<server> server_;
};

}  // namespace tact
