// The two-CAS queue-pointer swap (try_swap, src/executor/queue_swap.hpp)
// against a victim gulping the queue and against another thief.
//
// Worker i owns ownership slot i. The victim, worker 0, sweeps its slot
// once: it loads the slot (relaxed, as worker::sweep does) and gulps the
// queue it finds. A thief looks at its victim's slot as worth_stealing
// does (a queue with mail that nobody processes; in the exhaustive check
// it does not look), tries one swap, then sweeps its own slot once. With
// three workers the second thief steals from the first, whose own slot it
// may find nulled mid-swap. Queue 0 holds a chain of two letters (the
// first one's delivery posts the second), so it has mail for the victim
// and for whoever holds it next.
//
// Checks: at every step no queue sits in two slots, and at the end every
// slot holds a queue and each queue one slot (nothing lost, nothing
// duplicated); no batch is run by two workers at once, and the actor state
// a delivery writes is never raced (being_processed settles a victim that
// loaded its slot before the swap against the thief that took it); every
// letter is delivered once, in order (what is left after the sweeps is
// swept at the end).
#include <tact/detail/atomic.hpp>

#include "executor/queue_swap.hpp"
#include "mail.hpp"
#include "model.hpp"

namespace {

using tact::detail::atomic;
using tact::model::letter;
using tact::model::work_queue;

// The swap the engine makes.
struct two_cas {
  static bool swap(atomic<work_queue*>& mine, atomic<work_queue*>& theirs, work_queue* wanted) {
    return tact::detail::try_swap(mine, theirs, wanted);
  }
};

// A mutant: the swap without step 2 (nulling our slot first). A thief
// that steals from us meanwhile then has its queue overwritten by our
// step 4: one queue is lost and another sits in two slots.
struct one_cas {
  static bool swap(atomic<work_queue*>& mine, atomic<work_queue*>& theirs, work_queue* wanted) {
    work_queue* const ours = mine.load();
    if (!theirs.compare_exchange_strong(wanted, ours)) return false;
    mine.store(wanted);
    return true;
  }
};

// A mutant: the swap as plain stores of loaded values.
struct naive {
  static bool swap(atomic<work_queue*>& mine, atomic<work_queue*>& theirs, work_queue* wanted) {
    if (theirs.load() != wanted) return false;
    work_queue* const ours = mine.load();
    theirs.store(ours);
    mine.store(wanted);
    return true;
  }
};

// chain: letters to queue 0 (queue 1 gets one, for the second thief).
// look: a thief looks at the queue before it swaps, as the engine does;
// without the look it swaps whatever it found, which reaches the swap in
// more interleavings, and halves the exhaustive search.
template <int Workers, int chain = 2, class Swap = two_cas, bool look = true>
struct steal : rl::test_suite<steal<Workers, chain, Swap, look>, Workers> {
  work_queue queues[3]{work_queue{1}, work_queue{1}, work_queue{1}};
  atomic<work_queue*> slots[Workers];
  letter letters[chain + 1];
  tact::model::post_office<2, 2> office;

  void before() {
    office.open();
    for (int w = 0; w < Workers; ++w) slots[w].store(&queues[w], std::memory_order_relaxed);
    for (int s = 0; s < chain; ++s) letters[s].seq = s;
    office.chain(queues[0], letters, chain);
    office.post(queues[0], letters[0]);
    if (Workers > 2) {  // for the second thief
      letters[chain].from = 1;
      letters[chain].actor = 1;
      office.post(queues[1], letters[chain]);
    }
  }

  void thread(unsigned index) {
    if (index > 0) try_to_steal(index, index - 1);
    sweep(index);
  }

  void after() {
    for (int round = 0; round < 2; ++round)
      for (int w = 0; w < Workers; ++w) sweep(w);
    bool held[Workers] = {};
    for (atomic<work_queue*>& slot : slots) {
      work_queue* const q = slot.load(std::memory_order_relaxed);
      RL_ASSERT(q != nullptr);
      const long at = q - queues;
      RL_ASSERT(at >= 0 && at < Workers && !held[at]);
      held[at] = true;
    }
    office.check({chain, Workers > 2 ? 1 : 0});
  }

  // No queue in two slots, ever.
  void invariant() {
    for (int a = 0; a < Workers; ++a)
      for (int b = a + 1; b < Workers; ++b) {
        work_queue* const q = slots[a].load(std::memory_order_relaxed);
        RL_ASSERT(q == nullptr || q != slots[b].load(std::memory_order_relaxed));
      }
  }

 private:
  void sweep(int w) {
    work_queue& q = *slots[w].load(std::memory_order_relaxed);  // never null: only w nulls it
    if (!q.looks_empty() && q.gulp() == work_queue::gulp_result::taken) office.process(q);
  }

  void try_to_steal(int thief, int victim) {
    work_queue* const q = slots[victim].load(std::memory_order_relaxed);
    if (q == nullptr || (look && (q->looks_empty() || q->being_processed()))) return;
    Swap::swap(slots[thief], slots[victim], q);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"queue-pointer swap"};
  m.check<steal<2, 1, two_cas, false>>("a victim and a thief, 1 letter: every interleaving",
                                       search::full());
  m.check<steal<2, 2>>("a victim and a thief, 2 letters: up to 4 preemptions", search::bounded(4));
  m.check<steal<3, 2>>("a victim and two thieves: up to 2 preemptions", search::bounded(2));
  m.check<steal<3, 2>>("a victim and two thieves: random", search::random(200000));
  m.mutant<steal<3, 2, naive>>("mutant: a swap by plain stores", search::bounded(2),
                               rl::test_result_user_invariant_failed);
  m.mutant<steal<3, 2, one_cas>>("mutant: a swap without nulling our slot first",
                                 search::bounded(2), rl::test_result_user_invariant_failed);
  m.mutant<steal<2, 2>>("mutant: gulp() reads being_processed relaxed", search::bounded(4),
                        rl::test_result_data_race,
                        "work_queue::gulp", std::memory_order_relaxed);
  return m.main(argc, argv);
}
