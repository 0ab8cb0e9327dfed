#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <tact/config.hpp>
#include <tact/stats.hpp>

#include "executor/seam.hpp"
#include "support/counter.hpp"
#include "support/fixed_array.hpp"
#include "support/padded.hpp"
#include "transactional/postponed.hpp"

namespace tact {
class actor_system;
}

namespace tact::detail::tx {

// One runner's transactional statistics (see worker_stats::tx_*), written
// only on its thread.
struct dispatch_counts {
  // A dispatch that deliver()'s common path committed counts once, in
  // `plain`, instead of in both `dispatches` and `commits`: one counter
  // fewer to write per message.
  counter plain;
  counter dispatches;
  counter commits;
  counter becomes;
  counter collisions;
  counter retries;
  counter serializations;
  counter rollbacks;
  counter unmatched;
  counter dropped;
};

// The transactional side of an actor system: its executor, the settings
// that only transactional actors use, and their statistics, per runner of
// the executor (see runner::index) and for other threads. Every cell names
// its system's domain. Made by the system, which owns it; with checks on,
// the system's actors share it (see hold()).
class domain {
 public:
  // Registers the transactional envelopes' discard handler with `ex`, and
  // the postponed sends' retry.
  explicit domain(executor& ex);
  domain(const domain&) = delete;
  domain& operator=(const domain&) = delete;

  // Not once gone().
  executor& ex() const noexcept { return ex_; }
  // Set once the system takes no more messages (see stopping_flag), and
  // for good once it is destroyed.
  bool stopping() const noexcept { return stopping_->load(std::memory_order_seq_cst); }
  // With checks on: the system has been destroyed (see orphan()).
  bool gone() const noexcept { return gone_.load(std::memory_order_relaxed); }
  std::uint32_t collision_limit() const noexcept { return collision_limit_; }
  std::uint32_t collision_bound() const noexcept { return collision_bound_; }

  // Only on runner r's thread.
  dispatch_counts& counts(const runner& r) noexcept { return per_runner_[r.index()]; }
  // A send to an empty reference, on whichever thread: counted as dropped,
  // and as rejected by the executor.
  void count_dropped() noexcept;

  // Adds the transactional statistics to those the executor gathered.
  void add_to(system_stats& s) const noexcept;

  // Sends that waited for memory (see dispatch.cpp).
  postponed_sends& postponed() noexcept { return postponed_; }

  // ---- lifetime, with checks on; any thread ----
  // The domain outlives its system while actors of the system exist, so
  // that a send to one after the system is destroyed finds stopping() and
  // gone() set, and fails clearly (see dispatch.cpp), instead of reading
  // freed memory. The system holds one reference, and each cell one from
  // create() to destroy(); the last to let go frees the domain.
  void hold() noexcept { holders_.fetch_add(1, std::memory_order_relaxed); }
  static void let_go(domain* d) noexcept {
    if (d->holders_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete d;
  }
  // By the system's destructor, once it has stopped: marks the domain
  // gone and lets go of the system's reference.
  static void orphan(std::unique_ptr<domain> d) noexcept;

 private:
  executor& ex_;
  // The executor's flag; once the system is gone, gone_.
  const std::atomic<bool>* stopping_;
  const std::uint32_t collision_limit_;
  const std::uint32_t collision_bound_;
  fixed_array<padded<dispatch_counts>> per_runner_;
  std::atomic<std::uint64_t> foreign_dropped_{0};
  postponed_sends postponed_;
  std::atomic<bool> gone_{false};
  std::atomic<std::uint64_t> holders_{1};
};

// The configuration, if what the transactional model reads of it can work;
// else std::invalid_argument, saying what to change.
const system_config& validated(const system_config& config);

// The system's domain (owned by the system; see actor_system.cpp).
domain& domain_of(actor_system& system) noexcept;

}  // namespace tact::detail::tx
