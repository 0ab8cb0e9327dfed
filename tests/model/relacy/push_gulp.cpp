// Shard push against gulp: senders post to one work queue while a worker
// sweeps it as worker::sweep does (the unlocked look at pending_, the gulp,
// the batch drained without the lock, finish), with the engine's
// work_queue and spinlock (src/mailbox).
//
// Checks: every letter is delivered once, each sender's in the order it
// posted them; what a sender wrote before posting is visible where it is
// delivered (no data race: the lock's acquire and release); and the
// sweeper, which spins until it has everything, is never left looking at a
// pending_ of zero while mail waits (that would be a livelock).
//
// Abstracted: the envelope's words and the copy queue's array, which
// Relacy does not track (see mail.hpp).
#include <tact/detail/atomic.hpp>

#include "mail.hpp"
#include "model.hpp"

namespace {

using tact::model::letter;
using tact::model::work_queue;

// Threads 0 to Senders - 1 post `each` letters. The last one sweeps:
// `sweeps` times, then the rest is swept at the end; or, with sweeps = 0,
// until it has every letter, spinning meanwhile.
template <int Senders, int each, int sweeps = 0>
struct push_vs_gulp : rl::test_suite<push_vs_gulp<Senders, each, sweeps>, Senders + 1> {
  work_queue queue{1};  // a floor of one: posts grow the mailbox's array
  letter letters[Senders][each];
  tact::model::post_office<Senders, 1> office;

  void before() {
    office.open();
    for (int p = 0; p < Senders; ++p)
      for (int s = 0; s < each; ++s) letters[p][s].from = p, letters[p][s].seq = s;
  }

  void thread(unsigned index) {
    if (index < Senders) {
      for (letter& l : letters[index]) office.post(queue, l);
      return;
    }
    for (int sweep = 0; sweeps == 0 ? office.delivered() < Senders * each : sweep < sweeps;
         ++sweep) {
      if (queue.looks_empty()) {
        if (sweeps == 0) tact::detail::model_yield();
        continue;
      }
      office.sweep(queue);
    }
  }

  void after() {
    office.drain(queue);
    office.check(each);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"shard push against gulp"};
  m.check<push_vs_gulp<1, 1>>("1 sender of 1, a spinning sweeper: every interleaving",
                              search::full());
  m.check<push_vs_gulp<1, 2, 2>>("1 sender of 2, 2 sweeps: every interleaving", search::full());
  m.check<push_vs_gulp<1, 2>>("1 sender of 2, a spinning sweeper: up to 3 preemptions",
                              search::bounded(3));
  m.check<push_vs_gulp<2, 2>>("2 senders of 2, a spinning sweeper: up to 3 preemptions",
                              search::bounded(3));
  m.check<push_vs_gulp<2, 2>>("2 senders of 2, a spinning sweeper: random", search::random(20000));
  m.mutant<push_vs_gulp<1, 1>>("mutant: the lock acquires relaxed", search::full(),
                               rl::test_result_data_race,
                               "spinlock::lock", std::memory_order_relaxed);
  m.mutant<push_vs_gulp<1, 1>>("mutant: the lock releases relaxed", search::full(),
                               rl::test_result_data_race,
                               "spinlock::unlock", std::memory_order_relaxed);
  return m.main(argc, argv);
}
