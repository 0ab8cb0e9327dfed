#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <utility>

#include <tact/actor.hpp>
#include <tact/config.hpp>
#include <tact/export.hpp>
#include <tact/placement.hpp>
#include <tact/stats.hpp>

namespace tact {

namespace detail {
class executor;
class timer_service;
class waiting_askers;
struct step_plan;
executor& executor_of(actor_system& system) noexcept;
timer_service& timers_of(actor_system& system) noexcept;
waiting_askers& askers_of(actor_system& system) noexcept;
namespace tx {
class domain;
domain& domain_of(actor_system& system) noexcept;
}  // namespace tx

// While alive, actors constructed on this thread join `system` (see
// actor::actor()), on work queue `home` if one is given (a sponsor's).
// Used by actor_system::spawn and sponsor::spawn.
class TACT_API ambient_scope {
 public:
  explicit ambient_scope(actor_system& system) noexcept;
  ambient_scope(actor_system& system, std::uint32_t home) noexcept;
  ~ambient_scope();
  ambient_scope(const ambient_scope&) = delete;
  ambient_scope& operator=(const ambient_scope&) = delete;

 private:
  executor* previous_;
  std::uint32_t previous_home_;
};

// `new T(args...)` for the spawn functions, which call it inside the scope
// that places the actor.
template <class T, class... Args>
T& new_actor(Args&&... args) {
  // GCC 12 misreads a class's own operator new/delete pair on the path
  // where T's constructor throws as mismatched; the pairing is correct.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
  return *new T(std::forward<Args>(args)...);
#pragma GCC diagnostic pop
}
}  // namespace detail

// An executor and the actors running on it. Construction starts the
// worker threads; stop() (or the destructor) waits for every actor to
// finish and joins them. Several systems may exist at once, and one process
// may start and stop systems any number of times.
class TACT_API actor_system {
 public:
  // Throws std::invalid_argument, saying what to change, for a
  // configuration that cannot work (zero workers, fewer queues than workers).
  explicit actor_system(system_config config = {});
  // Calls stop() if it has not been called. Its sponsors, and its actors
  // that have not finished (abandoned by a sponsor, or left by a
  // deterministic stop()), must be destroyed first: with checks on, a
  // system destroyed while one lives aborts, saying which. Finished
  // actors, actor_refs, timers and messages may outlive it (see
  // docs/concepts.md, "Lifetimes"). Not from a behaviour.
  ~actor_system();

  actor_system(const actor_system&) = delete;
  actor_system& operator=(const actor_system&) = delete;

  std::uint32_t workers() const noexcept;
  std::uint32_t queues() const noexcept;
  const system_config& config() const noexcept;
  bool stopped() const noexcept;

  // Counters summed over workers. Safe from any thread; exact once the
  // system is quiescent or stopped.
  system_stats stats() const;

  // `new T(args...)` joined to this system, wherever it is called from.
  // The actor is deleted by the system when it returns Delete or receives
  // delete_msg. Safe from any thread.
  template <class T, class... Args>
  requires std::derived_from<T, actor> T& spawn(Args&&... args) {
    detail::ambient_scope scope{*this};
    return detail::new_actor<T>(std::forward<Args>(args)...);
  }

  // As spawn, with the actor's queue at `where` (see tact::placement), and
  // the actors T's constructor creates beside it:
  //
  //   auto& counter = system.spawn_at<tally>(tact::on_worker(1));
  //   auto& logger = system.spawn_at<log_writer>(tact::next_to(counter), "tally.log");
  //
  // std::invalid_argument for a worker or queue this system does not have
  // or an actor of another system; std::logic_error next to an actor that
  // has finished.
  template <class T, class... Args>
  requires std::derived_from<T, actor> T& spawn_at(placement where, Args&&... args) {
    placement_scope scope{*this, where};
    return detail::new_actor<T>(std::forward<Args>(args)...);
  }

  // Blocks until no message is queued or running: every worker has parked,
  // no asker is helping, and no sponsor that runs by itself (a
  // dedicated_sponsor, a sponsor with a `wake`) has mail it has not run.
  // Mail for a sponsor that the program runs by hand (run_pending) does
  // not count until it runs, nor do pending timers. Not from a behaviour (a worker cannot wait for itself: std::logic_error).
  // Returns at once if the system is stopped.
  void await_quiescence();

  // Blocks until every actor has finished and no message is in flight, then
  // ends the timers still pending (timers do not keep a system alive, and
  // await_quiescence() does not wait for them either) and joins the
  // workers. Messages still queued afterwards (sent from other
  // threads meanwhile) are reported and dropped. Asks still waited on
  // from outside the pool then end at once with ask_error::no_reply
  // (nothing can answer them any more); stop() returns once each of them
  // is done with the system, and an ask that starts waiting later ends at
  // once. Call it when no other thread will create actors or send again. Idempotent; not from a
  // behaviour (std::logic_error).
  void stop();

 protected:
  // A system on the deterministic executor (see testing::deterministic_system).
  actor_system(const system_config& config, const detail::step_plan& plan);

 private:
  friend class actor;
  friend class detail::ambient_scope;
  friend class placement_scope;
  friend detail::executor& detail::executor_of(actor_system& system) noexcept;
  friend detail::timer_service& detail::timers_of(actor_system& system) noexcept;
  friend detail::waiting_askers& detail::askers_of(actor_system& system) noexcept;
  friend detail::tx::domain& detail::tx::domain_of(actor_system& system) noexcept;
  std::unique_ptr<detail::executor> executor_;
  std::unique_ptr<detail::tx::domain> tx_;         // transactional actors' side
  std::unique_ptr<detail::timer_service> timers_;
  std::unique_ptr<detail::waiting_askers> askers_;  // asks waited on from outside the pool
};

}  // namespace tact
