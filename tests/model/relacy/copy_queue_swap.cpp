// The copy queues' swaps while a sender appends: a gulp swaps the mailbox
// with the queue's batch under the lock, and a worker holding the queue
// (a behaviour of it waits, see held_queue) takes the mail that came
// since with regulp, which swaps its drained batch's chunks into the
// mailbox. Either way the sender goes on appending to whichever copy queue
// is the mailbox now while the worker drains the other without the lock.
// The engine's work_queue and copy_queue (src/mailbox); the mailbox starts
// with one slot, so appends also add chunks while the other copy queue is
// drained and frees its own.
//
// The worker gulps the letter posted before the start, drains its batch
// (a scheduling point after each delivery), takes what came meanwhile
// with regulp and drains it, `regulps` times, then finishes. Checks:
// every letter is delivered once, in the order sent (a mailbox and a
// batch sharing a chunk would deliver some twice or lose some), with the
// sender's writes visible (the lock orders each append before the swap
// that hands it over).
#include <tact/detail/atomic.hpp>

#include "mail.hpp"
#include "model.hpp"

namespace {

using tact::model::copy_queue;
using tact::model::letter;
using tact::model::work_queue;

// The sender posts letters 1 to `letters` - 1 (0 is posted before).
// interleave: a scheduling point after each delivery (see mail.hpp).
// drain_first: the worker drains a batch before it regulps (a mutant
// regulps into a batch it has not drained).
template <int letters, int regulps, bool interleave = true, bool drain_first = true>
struct swaps : rl::test_suite<swaps<letters, regulps, interleave, drain_first>, 2> {
  work_queue queue{1};
  letter sent[letters];
  tact::model::post_office<1, 1> office;

  void before() {
    office.open();
    for (int s = 0; s < letters; ++s) sent[s].seq = s;
    office.post(queue, sent[0]);
  }

  void thread(unsigned index) {
    if (index == 0) {
      for (int s = 1; s < letters; ++s) office.post(queue, sent[s]);
      return;
    }
    RL_ASSERT(queue.gulp() == work_queue::gulp_result::taken);
    copy_queue& batch = queue.batch();
    for (int round = 0; round <= regulps; ++round) {
      if (round > 0 && !queue.regulp(batch)) continue;
      if (drain_first || round == regulps) office.run(queue, batch, interleave);
    }
    queue.finish();
  }

  void after() {
    office.drain(queue);
    office.check(letters);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"copy-queue swaps"};
  m.check<swaps<2, 1>>("an append against a gulp and a regulp: every interleaving", search::full());
  m.check<swaps<3, 1, false>>("2 appends, a gulp and a regulp, no pauses: every interleaving",
                              search::full());
  m.check<swaps<4, 2>>("3 appends against a gulp and 2 regulps: up to 5 preemptions",
                       search::bounded(5));
  m.check<swaps<5, 3>>("4 appends against a gulp and 3 regulps: random", search::random(50000));
  m.mutant<swaps<3, 1, true, false>>("mutant: regulp into a batch not yet drained", search::full(),
                                     rl::test_result_user_assert_failed);
  m.mutant<swaps<2, 1>>("mutant: the lock releases relaxed", search::full(),
                        rl::test_result_data_race, "spinlock::unlock",
                        std::memory_order_relaxed);
  return m.main(argc, argv);
}
