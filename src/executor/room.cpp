#include "executor/room.hpp"

#include "executor/runner.hpp"

// The out-of-line half of room.hpp: the gauge's lifetime, the receiver's
// entry point, and the wait of a behaviour, which needs the runner.
namespace tact::detail {

namespace {

struct room_condition : wake_condition {
  bounded_gauge* gauge;
  const room_wait* also;
};

wake_condition::status poll_room(wake_condition& c, bool expired) noexcept {
  auto& r = static_cast<room_condition&>(c);
  return expired || must_go_on(*r.also) || room_made(*r.gauge) ? wake_condition::ready
                                                               : wake_condition::waiting;
}

}  // namespace

mailbox_gauge* make_gauge(std::uint32_t most, overflow when_full) {
  return new bounded_gauge{most, when_full};
}

void free_gauge(mailbox_gauge* g) noexcept { delete static_cast<bounded_gauge*>(g); }

void publish_received(mailbox_gauge& g) noexcept { publish(static_cast<bounded_gauge&>(g)); }

bool suspend_for_room(runner& self, bounded_gauge& g, const room_wait& w) {
  const enlisted waiter{g, self};
  if (room_made(g)) return true;
  room_condition c{{&poll_room, w.deadline}, &g, &w};
  self.suspend(c);
  return room_made(g) || must_go_on(w);
}

}  // namespace tact::detail
