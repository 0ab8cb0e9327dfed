#include <cstdio>
#include <cstdlib>
#include <exception>

#include <tact/build_config.hpp>
#include <tact/detail/classic_hooks.hpp>

#include "classic/anchor.hpp"
#include "executor/seam.hpp"
#include "support/type_name.hpp"

// The library half of the classic actor model's send and delivery paths
// (the templates in tact/send.hpp are the other half).
namespace tact::detail {

// Every classic send runs through it: on a 64-byte line of its own start,
// so that where the linker happens to put it does not move its hot path
// across a line boundary from one build to the next.
[[gnu::aligned(64)]] void post(executor& ex, std::uint32_t queue, void* target, void* message,
                               run_fn run) {
  post(ex, this_runner(ex), queue, target, message, run);
}

// The state is read again once this runner holds the queue (taking it
// may have made it so), and then it is this runner's to write. A send
// racing in from another thread raises sent_aside before it posts: if
// this one missed it, that message waits in the queue's mailbox, from
// another sender, and this one may run first; the actor takes no stack
// again. Relaxed: a send that happens-before this one and went aside is
// seen (coherence), and the state's writers are ordered by the queue's
// hand-over between them.
bool post_on_stack(actor& receiver, std::uint32_t queue, void* target, void* message,
                   run_fn run) noexcept {
  runner* const self = this_runner(actor_access::executor_of(receiver));
  std::atomic<std::uint8_t>& state = actor_access::stacking(receiver);
  const std::uint8_t seen = state.load(std::memory_order_relaxed);
  if (self == nullptr || !stacking::takes_stack(seen) ||
      !self->can_stack(queue, seen == stacking::unsent))
    return false;
  const std::uint8_t now = state.load(std::memory_order_relaxed);
  if (!stacking::takes_stack(now) ||
      actor_access::sent_aside(receiver).load(std::memory_order_relaxed) != 0)
    return false;
  state.store(now == stacking::unsent ? stacking::first_stacked : stacking::on_stack,
              std::memory_order_relaxed);
  self->push_stack(queue, target, message, run);
  return true;
}

void dispose_message(message& m, allocation how) noexcept {
  if (how == allocation::Delete)
    delete &m;
  else
    m.~message();
}

namespace {

void take_action(actor& a, allocation how) noexcept {
  switch (how) {
    case allocation::Delete:
      delete &a;
      break;
    case allocation::Destroy:
      a.~actor();
      break;
    case allocation::Finished:
    case allocation::Nodelete:
      break;
  }
}

}  // namespace

void retire(actor& a, allocation how) noexcept {
  close_anchor(a);
  actor_finished(actor_access::executor_of(a), actor_access::queue_of(a));
  if constexpr (!build::checks) {
    actor_access::mark_finished(a);
    take_action(a, how);
    return;
  }
  // retire() is only called from a delivery, whose own message still
  // counts as in flight, so it never acts itself: the land() that brings the
  // count to zero does, after this delivery or after the last message
  // queued behind it.
  actor_access::defer(a, how);
  actor_access::mark_finished(a);
}

// Only the landing that takes the count to zero after the actor finished
// acts. It sees the deferred action: either it runs on the retiring thread
// after retire(), or it belongs to a dead letter whose sender read
// `finished` (a sequentially consistent load of retire's store, so the
// relaxed store of the action before it is visible). A sender that counts
// itself in before reading `finished` either sees it (and lands as a dead
// letter) or is counted before the count can reach zero. The exchange
// makes a second zero (more dead letters to a Finished or Destroyed actor)
// harmless.
void land(actor& a) noexcept {
  if (actor_access::land_one(a) && actor_access::queue_of(a) == finished_queue)
    take_action(a, actor_access::take_deferred(a));
}

void report_exception(actor& a, const std::type_info& actor_type,
                      const std::type_info& message_type) noexcept {
  std::exception_ptr error = std::current_exception();
  report_made(
      actor_access::executor_of(a), diagnostic_kind::behaviour_exception,
      [&] {
        return "actor " + type_name(actor_type) + " threw " + describe(error) +
               " while receiving " + type_name(message_type) +
               "; the message was dropped and the actor carries on";
      },
      error);
}

void report_overlap(const std::type_info& actor_type, const std::type_info& message_type,
                    std::uint32_t running) noexcept {
  std::fprintf(stderr,
               "tact: bug: actor %s began receiving %s while %u of its behaviours were still "
               "running; a classic actor must run one message at a time\n",
               type_name(actor_type).c_str(), type_name(message_type).c_str(), running);
  std::abort();
}

// After its system is destroyed, every classic actor still alive has
// finished (see executor::refuse_to_be_outlived), so a send to one ends up
// here: with checks, this is where it is caught.
void report_send_to_finished(actor& a, const std::type_info& actor_type,
                             const std::type_info& message_type) noexcept {
  executor& ex = actor_access::executor_of(a);
  if constexpr (build::checks)
    if (!live(&ex))
      lifetime_violated("a " + type_name(message_type) + " was sent to actor " +
                        type_name(actor_type) +
                        " after its actor_system was destroyed; a finished actor may outlive "
                        "its system, but nothing may be sent to it (nor a timer started or an "
                        "ask made for it) once the system is gone");
  count(ex, tally::dead_letter);
  count(ex, tally::rejected);
  if constexpr (build::checks) {
    report_made(ex, diagnostic_kind::send_to_finished, [&] {
      return "a " + type_name(message_type) + " was sent to an actor " + type_name(actor_type) +
             " that has finished; the message was dropped";
    });
    land(a);
  }
}

void report_delivery_to_finished(actor& a, const std::type_info& actor_type,
                                 const std::type_info& message_type) noexcept {
  executor& ex = actor_access::executor_of(a);
  count(ex, tally::dead_letter);
  report_made(ex, diagnostic_kind::delivery_to_finished, [&] {
    return "a " + type_name(message_type) + " queued for actor " + type_name(actor_type) +
           " arrived after that actor finished; the message was dropped";
  });
  land(a);
}

}  // namespace tact::detail
