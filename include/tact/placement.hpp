#pragma once

#include <cstdint>
#include <limits>

#include <tact/export.hpp>

namespace tact {

class actor;
class actor_system;
namespace detail {
class executor;
}

// Where a new classic actor's work queue is. An actor keeps its queue for
// life; a worker runs the queues it owns, and work stealing moves whole
// queues between idle and busy workers, so a placement says where an actor
// starts, not where it must run. Actors on one queue run one message at a
// time between them, in send order per sender, on whichever worker holds
// the queue: placing a conversation's actors together keeps it on one
// core; placing them on different workers spreads the load from the start.
//
// Without a placement (`new`, a member, system.spawn<T>), an actor created
// by a behaviour takes one of its worker's own queues, round robin, so a
// creator and what it creates start together; one created elsewhere takes
// the next queue round robin over all of them, from queue 0; one spawned
// by a sponsor takes the sponsor's queue.
class placement {
 public:
  // Round robin over the queues worker `worker` (< system.workers()) owns
  // when the actor is created.
  static placement on_worker(std::uint32_t worker) noexcept { return {kind::worker, worker}; }
  // Work queue `queue` (< system.queues()).
  static placement on_queue(std::uint32_t queue) noexcept { return {kind::queue, queue}; }
  // The queue of `other`, which must be alive and unfinished: the two then
  // never run at once. An actor bound to a sponsor shares that binding.
  static placement next_to(const actor& other) noexcept { return placement{&other}; }

 private:
  friend struct placement_access;
  enum class kind : std::uint8_t { worker, queue, beside };
  placement(kind k, std::uint32_t index) noexcept : kind_{k}, index_{index} {}
  explicit placement(const actor* other) noexcept : kind_{kind::beside}, other_{other} {}

  kind kind_;
  std::uint32_t index_ = 0;
  const actor* other_ = nullptr;
};

inline placement on_worker(std::uint32_t worker) noexcept { return placement::on_worker(worker); }
inline placement on_queue(std::uint32_t queue) noexcept { return placement::on_queue(queue); }
inline placement next_to(const actor& other) noexcept { return placement::next_to(other); }

// While alive, classic actors constructed on this thread join `system` at
// `where`: for actors that system.spawn_at does not make (members,
// locals). Every one, including those that behaviours this thread runs
// meanwhile create (a helping ask, a sponsor's run_pending), so keep it
// around the constructions it is for. Scopes nest; the innermost wins.
// Only on the thread that made it. Throws as actor_system::spawn_at does
// for a placement that cannot be.
class TACT_API placement_scope {
 public:
  placement_scope(actor_system& system, placement where);
  ~placement_scope();
  placement_scope(const placement_scope&) = delete;
  placement_scope& operator=(const placement_scope&) = delete;

 private:
  detail::executor* previous_;
  std::uint32_t previous_home_;
};

// Where an actor is now: a snapshot, safe from any thread while the actor
// exists (its queue never changes; the worker holding it may, by stealing).
struct location {
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t queue = none;   // its work queue; none once it has finished
  std::uint32_t worker = none;  // the pool worker holding that queue; none if sponsored,
                                // finished, or while a steal is moving the queue
  bool sponsored = false;       // bound to a sponsor: runs on the sponsor's thread
};
TACT_API location where(const actor& a) noexcept;

}  // namespace tact
