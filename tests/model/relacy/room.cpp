// Room in a bounded mailbox, under the C++ memory model: a sender that
// finds its receiver's mailbox full sleeps until the receiver, draining,
// wakes it (src/executor/room.hpp, whose code this runs: the gauge, the
// `waiting` bit, publish, enlisted, thread_waiter and sleep_for_room). The
// futex never returns spuriously here, so a lost wake-up leaves the sender
// asleep for good: Relacy reports a deadlock.
//
// The mailbox is modelled by a count of the messages posted and not yet
// taken: the sender posts after it has counted the message in the gauge
// (as post_message does), the receiver counts a message received before it
// handles it (as the deliveries do). Two threads: one sender sends
// `messages` to a receiver bounded to `bound`. Three: two senders. The
// mutant registers the waiter after its look at the gauge instead of
// before: a receiver that publishes in between finds nobody to wake. The
// spinlock around the waiter list makes a bounded search of more than two
// preemptions take minutes, so the larger runs are random. A behaviour's
// wait (a suspension, see hand_off and park_wake for the runner's own
// parking) polls the same room_made() under the same registration.
#include <tact/detail/atomic.hpp>

#include "executor/room.hpp"
#include "model.hpp"
#include "support/cpu_relax.hpp"

namespace tact::detail {

// The receiver's entry point, as room.cpp defines it (which needs the
// runner, too big to run here).
void publish_received(mailbox_gauge& g) noexcept { publish(static_cast<bounded_gauge&>(g)); }

}  // namespace tact::detail

namespace {

using tact::detail::atomic;
using tact::detail::bounded_gauge;

// The mutant's wait: sleep_for_room with the registration after the look.
bool register_late(bounded_gauge& g) {
  tact::detail::thread_waiter me;
  me.arm();
  if (tact::detail::room_made(g)) return true;
  const tact::detail::enlisted waiter{g, me};
  me.sleep_until(std::chrono::steady_clock::time_point::max());
  return true;
}

template <unsigned Senders, unsigned Messages, unsigned Bound, bool Late = false>
struct flood : rl::test_suite<flood<Senders, Messages, Bound, Late>, Senders + 1> {
  bounded_gauge* gauge = nullptr;
  atomic<unsigned> posted{0};
  unsigned taken = 0;

  void before() { gauge = new bounded_gauge{Bound, tact::overflow::wait}; }

  void send() {
    if (gauge->full()) {
      if constexpr (Late)
        register_late(*gauge);
      else
        tact::detail::sleep_for_room(*gauge, {});
    }
    gauge->sent.fetch_add(1, std::memory_order_relaxed);
    posted.fetch_add(1, std::memory_order_release);
    posted.notify_all();
  }

  void receive() {
    while (taken == posted.load(std::memory_order_acquire)) posted.wait(taken);
    ++taken;
    tact::detail::note_received(*gauge);
  }

  void thread(unsigned index) {
    if (index < Senders) {
      for (unsigned i = 0; i < Messages; ++i) send();
      return;
    }
    for (unsigned i = 0; i < Senders * Messages; ++i) receive();
  }

  void after() {
    RL_ASSERT(taken == Senders * Messages);
    RL_ASSERT(gauge->queued() == 0);
    delete gauge;
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"room in a bounded mailbox"};
  m.check<flood<1, 4, 2>>("a sender and its receiver, bound 2: random", search::random(200000));
  m.check<flood<1, 6, 4>>("a sender and its receiver, bound 4: random", search::random(200000));
  m.check<flood<2, 3, 2>>("two senders, bound 2: random", search::random(200000));
  m.check<flood<1, 3, 1>>("a sender and its receiver, bound 1: up to 2 preemptions",
                          search::bounded(2));
  m.mutant<flood<1, 4, 2, true>>("mutant: the waiter registers after its look",
                                 search::random(200000), rl::test_result_deadlock);
  return m.main(argc, argv);
}
