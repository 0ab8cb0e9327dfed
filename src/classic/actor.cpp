#include <tact/actor.hpp>

#include <stdexcept>
#include <string>

#include <tact/build_config.hpp>

#include <tact/actor_system.hpp>
#include <tact/detail/classic_hooks.hpp>

#include "classic/anchor.hpp"
#include "executor/seam.hpp"

namespace tact {
namespace {

detail::executor& ambient_or_throw() {
  if (detail::executor* ex = detail::ambient_executor()) return *ex;
  throw std::logic_error{
      "tact: an actor was created with no running actor_system; construct a tact::actor_system "
      "first, or create the actor with system.spawn<T>(...)"};
}

}  // namespace

actor::actor() : executor_{&ambient_or_throw()}, queue_{detail::admit(*executor_)} {}

actor::actor(actor_system& system)
    : executor_{system.executor_.get()}, queue_{detail::admit(*executor_)} {}

actor::~actor() {
  detail::drop_anchor(*this);
  if constexpr (build::checks) {
    if (const std::uint32_t queued = in_flight_.load(std::memory_order_seq_cst); queued > 0)
      detail::report_made(*executor_, diagnostic_kind::actor_destroyed_with_queued_messages, [&] {
        return "an actor was destroyed while " + std::to_string(queued) +
               " message(s) for it were still queued; they will reach a destroyed object (wait "
               "for them, e.g. with stop() or await_quiescence(), before the actor goes out of "
               "scope)";
      });
  }
  const std::uint32_t home = queue_.load(std::memory_order_relaxed);
  if (home == detail::finished_queue) return;
  detail::actor_finished(*executor_, home);
  detail::report_made(*executor_, diagnostic_kind::actor_destroyed_unfinished, [] {
    return std::string{
        "an actor was destroyed before it finished (no Delete, Destroy or Finished returned, no "
        "poison pill received); stop() no longer waits for it, but a message still queued for "
        "it would reach a destroyed object"};
  });
}

actor_system& actor::system() const noexcept { return detail::system_of(*executor_); }

bool actor::finished() const noexcept {
  return queue_.load(std::memory_order_relaxed) == detail::finished_queue;
}

}  // namespace tact
