#include <tact/placement.hpp>

#include <stdexcept>
#include <string>

#include <tact/actor_system.hpp>
#include <tact/detail/classic_hooks.hpp>

#include "executor/executor.hpp"

// Placement as API: the executor's queues named by the user, through the
// same ambient scope that sponsors use to bind the actors they spawn.
namespace tact {

struct placement_access {
  // The queue `where` names on `ex`, checked.
  static std::uint32_t home(detail::executor& ex, const placement& where) {
    switch (where.kind_) {
      case placement::kind::worker:
        if (where.index_ >= ex.worker_count())
          throw std::invalid_argument{"tact: placement on worker " + std::to_string(where.index_) +
                                      ", but the system has " +
                                      std::to_string(ex.worker_count()) + " worker(s)"};
        return ex.queue_on_worker(where.index_);
      case placement::kind::queue:
        if (where.index_ >= ex.queue_count())
          throw std::invalid_argument{"tact: placement on queue " + std::to_string(where.index_) +
                                      ", but the system has " + std::to_string(ex.queue_count()) +
                                      " queue(s)"};
        return where.index_;
      case placement::kind::beside:
        break;
    }
    const actor& other = *where.other_;
    if (&detail::actor_access::executor_of(other) != &ex)
      throw std::invalid_argument{"tact: placement next to an actor of another actor_system"};
    const std::uint32_t queue = detail::actor_access::queue_of(other);
    if (queue == detail::finished_queue)
      throw std::logic_error{"tact: placement next to an actor that has finished"};
    return queue;
  }
};

placement_scope::placement_scope(actor_system& system, placement where)
    : previous_{detail::executor::scope()}, previous_home_{detail::executor::scope_home()} {
  detail::executor& ex = *system.executor_;
  detail::executor::set_scope(&ex, placement_access::home(ex, where));
}

placement_scope::~placement_scope() { detail::executor::set_scope(previous_, previous_home_); }

location where(const actor& a) noexcept {
  detail::executor& ex = detail::actor_access::executor_of(a);
  location here;
  const std::uint32_t queue = detail::actor_access::queue_of(a);
  if (queue == detail::finished_queue) return here;
  here.queue = queue;
  here.sponsored = ex.sponsored(queue);
  const std::uint32_t worker = ex.worker_holding(queue);
  if (worker != detail::runner::no_queue) here.worker = worker;
  return here;
}

}  // namespace tact
