#include <tact/actor.hpp>

#include <stdexcept>
#include <string>

#include <tact/build_config.hpp>

#include <tact/actor_system.hpp>
#include <tact/detail/classic_hooks.hpp>

#include "classic/anchor.hpp"
#include "executor/room.hpp"
#include "executor/seam.hpp"

namespace tact {
namespace {

detail::executor& ambient_or_throw() {
  if (detail::executor* ex = detail::ambient_executor()) return *ex;
  throw std::logic_error{
      "tact: an actor was created with no running actor_system; construct a tact::actor_system "
      "first, or create the actor with system.spawn<T>(...)"};
}

// A new actor's queue, counted alive, and the system's default bound in
// `gauge`, if it has one: made first, so that a failure leaves nothing to
// undo.
std::uint32_t join(detail::executor& ex, std::atomic<detail::mailbox_gauge*>& gauge, bool beside) {
  const std::uint32_t most = detail::config_of(ex).mailbox_bound;
  detail::mailbox_gauge* const g = most == 0 ? nullptr : detail::make_gauge(most, overflow::wait);
  try {
    const std::uint32_t queue = detail::admit(ex, beside);
    gauge.store(g, std::memory_order_relaxed);
    return queue;
  } catch (...) {
    detail::free_gauge(g);
    throw;
  }
}

}  // namespace

// An actor made by a behaviour may take the stack (see actor::stacking_),
// and lives beside its creator if that one, itself made by a behaviour,
// runs its first message: a node of a tree that unfolds, whose children
// then stay on the stack of the worker running it. An actor that makes
// others later in its life (a pipeline's stage, sieve's filters) spreads
// them over its worker's queues, for stealing to share.
void actor::join_system() {
  actor* const creator = detail::running_actor();
  bool beside = false;
  if (creator != nullptr) {
    const std::uint8_t state = creator->stacking_.load(std::memory_order_relaxed);
    const std::uint8_t aside = creator->sent_aside_.load(std::memory_order_relaxed);
    beside = (state == detail::stacking::first_run && aside == 0) ||
             (state == detail::stacking::unsent && aside == 1);
  }
  queue_.store(join(*executor_, gauge_, beside), std::memory_order_relaxed);
  if (creator != nullptr) {
    stacking_.store(detail::stacking::unsent, std::memory_order_relaxed);
    sent_aside_.store(0, std::memory_order_relaxed);
  }
}

actor::actor() : executor_{&ambient_or_throw()} { join_system(); }

actor::actor(actor_system& system) : executor_{system.executor_.get()} { join_system(); }

void actor::bound_mailbox(std::uint32_t most, overflow when_full) {
  detail::mailbox_gauge* const old = gauge_.load(std::memory_order_relaxed);
  bool sent = old != nullptr && old->sent.load(std::memory_order_relaxed) != 0;
  if constexpr (build::checks) sent = sent || in_flight_.load(std::memory_order_seq_cst) != 0;
  if (sent)
    throw std::logic_error{
        "tact: bound_mailbox called after messages were sent to the actor; bound it before it "
        "is shared (in its constructor)"};
  detail::mailbox_gauge* const made = most == 0 ? nullptr : detail::make_gauge(most, when_full);
  // Release: a sender that loads the new gauge sees it whole.
  gauge_.store(made, std::memory_order_release);
  detail::free_gauge(old);
}

actor::~actor() {
  detail::free_gauge(gauge_.load(std::memory_order_relaxed));
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
