// The being_processed hand-off: two workers gulp the same work queue (as a
// victim that loaded its slot just before a thief swapped the queue away
// does, see worker::sweep). being_processed, read and set under the lock,
// lets one process the batch at a time; finish() clears it with release
// and the next gulp reads it with acquire, so the next processor, on
// either worker, sees everything the previous one did.
//
// Each delivery posts the next letter to the same queue and then writes its
// actor's state (see mail.hpp), so the lock orders only the post before the
// next gulp: the write after it is ordered by being_processed alone.
// Checks: every letter delivered once, in order; no data race on the
// actor's state; no delivery while the queue's batch is being drained by
// the other worker.
#include <tact/detail/atomic.hpp>

#include "mail.hpp"
#include "model.hpp"

namespace {

using tact::model::letter;
using tact::model::work_queue;

// Letters: the chain's length. All threads sweep the one queue.
template <int Workers, int Letters, int Sweeps = 2>
struct hand_off : rl::test_suite<hand_off<Workers, Letters, Sweeps>, Workers> {
  work_queue queue{1};
  letter letters[Letters];
  tact::model::post_office<1, 1> office;

  void before() {
    office.open();
    for (int s = 0; s < Letters; ++s) letters[s].seq = s;
    office.chain(queue, letters, Letters);
    office.post(queue, letters[0]);
  }

  // A few sweeps each, no spinning: the search stays finite. What is left
  // is swept at the end.
  void thread(unsigned) {
    for (int sweep = 0; sweep < Sweeps; ++sweep)
      office.sweep(queue);
  }

  void after() {
    office.drain(queue);
    office.check(Letters);
  }
};

// A batch cut short (a gulp budget): every letter is posted before the
// workers start, each gulp runs one letter and leaves the rest for the
// next gulp, on whichever worker, ahead of what is posted meanwhile
// (a letter posted by the last delivery, here).
template <int Workers, int Letters>
struct cut_short : rl::test_suite<cut_short<Workers, Letters>, Workers> {
  work_queue queue{1};
  letter letters[Letters + 1];
  tact::model::post_office<1, 1> office;

  void before() {
    office.open();
    for (int s = 0; s <= Letters; ++s) letters[s].seq = s;
    // The delivery of the one before last posts the last: mail behind
    // the batch that was cut.
    office.chain(queue, letters + Letters - 1, 2);
    for (int s = 0; s < Letters; ++s) office.post(queue, letters[s]);
  }

  void thread(unsigned) { office.sweep(queue, 1); }

  void after() {
    office.drain(queue);
    office.check(Letters + 1);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"being_processed hand-off"};
  m.check<hand_off<2, 2, 1>>("2 workers, 2 letters, a sweep each: every interleaving",
                             search::full());
  m.check<hand_off<2, 3, 2>>("2 workers, 3 letters, 2 sweeps each: up to 3 preemptions",
                             search::bounded(3));
  m.check<hand_off<3, 3, 1>>("3 workers, 3 letters, a sweep each: up to 2 preemptions",
                             search::bounded(2));
  m.check<hand_off<3, 3, 2>>("3 workers, 3 letters, 2 sweeps each: random", search::random(50000));
  m.check<cut_short<2, 3>>("2 workers, 3 letters, a letter per gulp: every interleaving",
                           search::full());
  m.check<cut_short<3, 3>>("3 workers, 3 letters, a letter per gulp: up to 3 preemptions",
                           search::bounded(3));
  m.mutant<hand_off<2, 2, 1>>("mutant: finish() releases relaxed", search::full(),
                              rl::test_result_data_race,
                              "work_queue::finish", std::memory_order_relaxed);
  m.mutant<hand_off<2, 2, 1>>("mutant: gulp() reads being_processed relaxed", search::full(),
                              rl::test_result_data_race,
                              "work_queue::gulp", std::memory_order_relaxed);
  return m.main(argc, argv);
}
