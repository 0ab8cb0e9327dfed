#include <chrono>
#include <string>

#include <tact/detail/classic_hooks.hpp>
#include <tact/send.hpp>

#include "executor/room.hpp"
#include "executor/seam.hpp"
#include "support/type_name.hpp"

// Who waits for room in a classic actor's bounded mailbox, and what a drop
// does (docs/flow_control.md); executor/room.hpp is how one waits.
namespace tact::detail {

namespace {

bool finished(const void* receiver) noexcept {
  return actor_access::queue_of(*static_cast<const actor*>(receiver)) == finished_queue;
}

room_wait waiting_for(const actor& receiver, const mailbox_gauge* own,
                      std::chrono::steady_clock::time_point deadline) {
  return {own, &finished, &receiver, &stopping_flag(actor_access::executor_of(receiver)),
          deadline};
}

void report_dropped(actor& receiver, bounded_gauge& g) noexcept {
  executor& ex = actor_access::executor_of(receiver);
  count(ex, tally::dropped_full);
  count(ex, tally::rejected);
  // The 1st, 2nd, 4th, 8th... drop of this actor: a flood of drops makes
  // a few lines, not one per message.
  const std::uint64_t n = g.dropped.fetch_add(1, std::memory_order_relaxed) + 1;
  if ((n & (n - 1)) != 0) return;
  report_made(ex, diagnostic_kind::mailbox_full, [&] {
    return "the full mailbox (bound " + std::to_string(g.bound) + ") of actor " +
           type_name(typeid(receiver)) + " dropped a message, " + std::to_string(n) +
           " so far (overflow::drop)";
  });
}

// The runner that may suspend the running behaviour to wait for room in
// `receiver`: a classic behaviour's, on a runner with fibers, sending to
// another actor; nullptr where nothing may wait that way.
runner* suspending_runner(const executor& ex, const actor* self, const actor& receiver) noexcept {
  runner* const r = this_runner(ex);
  if (self == nullptr || self == &receiver || r == nullptr || !r->can_suspend()) return nullptr;
  return r;
}

// A send's way to meet a full mailbox: the sender waits for room if it can
// and must (see docs/flow_control.md); false if the message is to be
// dropped (counted and reported here). Throws std::bad_alloc before it
// waits, if it cannot.
bool make_room(actor& receiver, mailbox_gauge& g) {
  executor& ex = actor_access::executor_of(receiver);
  if (g.when_full == overflow::drop) {
    report_dropped(receiver, static_cast<bounded_gauge&>(g));
    return false;
  }
  // Only a classic behaviour waits, and not for itself, nor when full
  // itself (see executor/room.hpp), nor where it cannot be suspended (a
  // sponsor's thread): the others go on, past the bound.
  const actor* const self = running_actor();
  runner* const r = suspending_runner(ex, self, receiver);
  const room_wait w = waiting_for(receiver, r != nullptr ? actor_access::gauge_of(*self) : nullptr,
                                  std::chrono::steady_clock::time_point::max());
  if (r == nullptr || must_go_on(w)) {
    count(ex, tally::over_bound);
    return true;
  }
  suspend_for_room(*r, static_cast<bounded_gauge&>(g), w);
  count(ex, tally::sends_waited);
  return true;
}

}  // namespace

posted post_bounded(actor& receiver, mailbox_gauge& g, void* target, message& msg, run_fn run,
                    admission how) {
  if (how == admission::make_room && g.full() && !make_room(receiver, g)) {
    dispose(msg);
    return posted::dropped;
  }
  // Counted before the post, which happens before the receiver takes the
  // message (the queue's lock, or the batch in hand): a receiver that
  // reads `sent` after receiving it sees this increment, so the mailbox
  // never seems to hold fewer than nothing. Relaxed: nothing else is
  // published with it.
  g.sent.fetch_add(1, std::memory_order_relaxed);
  bool queued = false;
  try {
    queued = post_to(receiver, target, std::addressof(msg), run);
  } catch (...) {
    g.sent.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
  if (!queued) g.sent.fetch_sub(1, std::memory_order_relaxed);
  return queued ? posted::queued : posted::finished;
}

bool wait_for_room(actor& receiver, mailbox_gauge& g,
                   std::chrono::steady_clock::time_point deadline) {
  executor& ex = actor_access::executor_of(receiver);
  bounded_gauge& b = static_cast<bounded_gauge&>(g);
  const actor* const self = running_actor();
  // Waiting for itself would last until the deadline.
  if (self == &receiver) return true;
  runner* const r = suspending_runner(ex, self, receiver);
  const bool room =
      r != nullptr
          ? suspend_for_room(*r, b, waiting_for(receiver, actor_access::gauge_of(*self), deadline))
          : sleep_for_room(b, waiting_for(receiver, nullptr, deadline));
  if (room) count(ex, tally::sends_waited);
  return room;
}

}  // namespace tact::detail
