// A claim (runner::post_claimed) against the queue's parked owner and a
// sender outside, under the C++ memory model.
//
// A claim is a post and a gulp in one lock section (work_queue::claim): the
// claimer runs the batch itself, wakes nobody, and leaves the owner's
// registration as waiter in place. What must hold:
//  * every letter is delivered once, each sender's in order: the claim
//    takes the mailbox ahead of its own letter, the claimer's later letter
//    joins the claimed batch, and the outside sender's later posts wait in
//    the mailbox behind it;
//  * no delivery races another to the same actor or misses what the one
//    before it did: the claim's acquire load of being_processed pairs with
//    the last processor's finish();
//  * no wake-up is lost: a post while the batch is claimed still wakes the
//    parked owner, and a claim handed back (work_queue::pause, a flood or a
//    batch cut short) wakes the waiter it returns, who takes the rest;
//  * a queue kept after its batch ran (runner::keep) and sent to again
//    (runner::rejoin) delivers the new letter after every earlier one of
//    its sender that took the mailbox meanwhile: the rejoin takes the
//    mailbox in first whenever the queue's count of waiting mail is not
//    zero;
//  * a queue taken into another batch (work_queue::absorb, a solo turn of
//    runner::absorb_all) delivers what it held there, once and in order,
//    and a letter merged into that batch later (runner::merge) comes after
//    every earlier one of its sender that took the mailbox: the merge
//    looks at the count of waiting mail as the rejoin does;
//  * in a solo turn whose merges skip that look (runner::
//    open_unchecked_merges), a sender whose queue was taken last, after it
//    ran elsewhere and posted to a queue taken earlier, still has that
//    mail delivered before its later letter: the counts are read once,
//    after every take, and a count above zero keeps the merges checked.
//
// The queue and its parking are the engine's: work_queue (post, claim,
// pause, gulp, finish, register_waiter), parker and the futex. The owner
// is a pool worker cut down to one slot and no stealing, as in
// park_wake.cpp. A lost wake-up leaves the owner asleep for good, and the
// sender waiting for the mail it strands: Relacy reports a livelock.
#include <tact/detail/atomic.hpp>

#include "executor/parker.hpp"
#include "mail.hpp"
#include "model.hpp"
#include "support/cpu_relax.hpp"

namespace tact::detail {

// The queue's owner: sweeps its one queue and parks on it until stopped.
class owner final : public sleeper {
 public:
  owner(work_queue& q, atomic<bool>& stopping, ::tact::model::post_office<2, 1>& office)
      : q_{q}, stopping_{stopping}, office_{office} {}

  void run() {
    while (!stopping_.load(std::memory_order_seq_cst)) {
      if (!q_.looks_empty()) {
        // Mail: gulp it, unless the queue looks processed (claimed), as a
        // thief's look would; then let the claimer finish. (Gulping to
        // find it busy would take the lock on every spin, which Relacy,
        // whose relaxed loads may stay stale, lets starve the claimer's.)
        if (q_.being_processed() || !office_.sweep(q_)) cpu_relax();
        continue;
      }
      const auto registered = [this] { return q_.register_waiter(this, nullptr); };
      const auto stopping = [this] { return stopping_.load(std::memory_order_seq_cst); };
      if (parker_.park(registered, stopping, parker::sleeping)) parker_.sleep(parker::sleeping);
    }
  }

  void wake() noexcept override { parker_.wake(); }

 private:
  work_queue& q_;
  atomic<bool>& stopping_;
  ::tact::model::post_office<2, 1>& office_;
  parker parker_;
};

}  // namespace tact::detail

namespace {

using tact::detail::atomic;
using tact::detail::owner;
using tact::model::letter;
using tact::model::work_queue;

// What the claimer does with its claim.
enum class then {
  run,                // drains the claimed batch, as drain_claims does
  hand_back,          // hands it back, waking the waiter pause() returns
  hand_back_no_wake,  // the same, forgetting the wake-up (a mutant)
  keep_and_rejoin,    // runs it and keeps the queue; its second letter took
                      // the mailbox; then sends a third, as runner::rejoin
  rejoin_unchecked,   // the same, not looking at the mailbox (a mutant)
  absorb_and_merge,   // takes the queue into a batch of its own (absorb),
                      // merges a letter, posts one, and merges a third
                      // only if the mailbox holds nothing
  merge_unchecked,    // the same, not looking at the mailbox (a mutant)
};

// Thread 0 is the owner. Thread 1 claims the queue with its first letter
// (only if the owner sleeps, with `asleep_only`), joins its second letter
// to the claimed batch, then runs or hands back the batch; if the claim
// is refused it posts both letters. Thread 2 posts two letters, waking
// the waiter each post names, and stops the system once all four are in.
template <bool asleep_only, then next>
struct claim_race : rl::test_suite<claim_race<asleep_only, next>, 3> {
  work_queue q{1};
  atomic<bool> stopping{false};
  letter mine[3];
  letter theirs[2];
  tact::model::post_office<2, 1> office;
  owner worker{q, stopping, office};

  void before() {
    office.open();
    for (int i = 0; i < 3; ++i) {
      mine[i].from = 0;
      mine[i].seq = i;
    }
    for (int i = 0; i < 2; ++i) {
      theirs[i].from = 1;
      theirs[i].seq = i;
    }
  }

  void thread(unsigned index) {
    if (index == 0) return worker.run();
    if (index == 1) return claimer();
    for (letter& l : theirs) post(l);
    while (office.delivered() < sent()) tact::detail::model_yield();
    stopping.store(true, std::memory_order_seq_cst);
    worker.wake();
  }

  static constexpr bool rejoins = next == then::keep_and_rejoin || next == then::rejoin_unchecked;
  static constexpr bool merges = next == then::absorb_and_merge || next == then::merge_unchecked;
  static constexpr int sent() { return rejoins || merges ? 5 : 4; }

  void claimer() {
    if (merges) return absorb_and_merge();
    if (!office.claim(q, mine[0], asleep_only)) {
      post(mine[0]);
      post(mine[1]);
      if (rejoins) post(mine[2]);
      return;
    }
    if (rejoins) return keep_and_rejoin();
    office.join(q, mine[1]);
    switch (next) {
      case then::run:
        office.process(q);
        break;
      case then::hand_back:
        if (tact::detail::sleeper* parked = q.pause()) parked->wake();
        break;
      case then::hand_back_no_wake:
        (void)q.pause();
        break;
      default:
        break;
    }
  }

  // The claimed batch runs and the queue stays processed, its batch empty
  // (runner::keep). The second letter takes the mailbox, as a send with
  // appends held does; the third goes straight into the kept batch, after
  // taking in the mailbox if its count says it holds mail.
  void keep_and_rejoin() {
    office.run(q, q.batch());
    q.batch().recycle();
    post(mine[1]);
    if (next == then::keep_and_rejoin && q.queued() != 0) q.regulp(q.batch());
    office.join(q, mine[2]);
    office.process(q);
  }

  // A solo turn: the queue's mail moves into the batch in hand (here a
  // batch of the claimer's own), the first letter merges into it, the
  // second takes the mailbox (a send with appends held), the third merges
  // only if the queue's count of waiting mail is zero (else it takes the
  // mailbox too). The batch runs, and the queue, kept meanwhile with its
  // own batch empty, is let go.
  void absorb_and_merge() {
    if (!q.absorb(batch)) {
      for (letter& l : mine) post(l);
      return;
    }
    office.join(batch, mine[0]);
    post(mine[1]);
    if (next == then::absorb_and_merge && q.queued() != 0)
      post(mine[2]);
    else
      office.join(batch, mine[2]);
    office.run(q, batch, true);
    q.finish();
  }

  void post(letter& l) {
    const work_queue::sleepers woken = office.post(q, l);
    if (woken.waiter != nullptr) woken.waiter->wake();
  }

  void after() { office.check({rejoins || merges ? 3 : 2, 2}); }

  tact::detail::copy_queue batch{1};  // the batch in hand of a solo turn
};

// How a solo turn opens its unchecked merges (see solo_race).
enum class opens {
  after_takes,   // reads the counts once every queue is taken, as the runner does
  before_takes,  // reads them before taking the sender's queue (a mutant)
  unlooked,      // never reads them (a mutant)
};

// Thread 0 runs the sender's queue P elsewhere (a helping asker's runner):
// it runs the letter that makes the sender act, the sender posts its first
// letter to Q, the receiver's queue, and P is let go. Thread 1 runs a solo
// turn: it takes Q into its batch, then P (once P is let go), reads Q's
// count of waiting mail, and runs the sender again, whose second letter
// merges into the batch without a look if the count read zero, and takes
// Q's mailbox otherwise. Every letter is delivered once, each sender's in
// order: a merge opened before P was taken, or without the count, may
// overtake the first letter, waiting in Q's mailbox.
template <opens how>
struct solo_race : rl::test_suite<solo_race<how>, 2> {
  work_queue p{1};
  work_queue q{1};
  letter wake;      // from sender 1, to the sender (actor 1)
  letter sends[2];  // from the sender (sender 0), to the receiver (actor 0)
  tact::model::post_office<2, 2> office;
  tact::detail::copy_queue batch{1};  // the solo turn's batch in hand

  void before() {
    office.open();
    wake.from = 1;
    wake.actor = 1;
    for (int i = 0; i < 2; ++i) {
      sends[i].from = 0;
      sends[i].seq = i;
    }
    // P is already thread 0's, with the letter to run.
    (void)office.post(p, wake);
    RL_ASSERT(p.gulp() == work_queue::gulp_result::taken);
  }

  void thread(unsigned index) {
    if (index == 0) {
      office.run(p, p.batch());
      (void)office.post(q, sends[0]);
      p.finish();
      return;
    }
    RL_ASSERT(q.absorb(batch));  // nobody else processes Q
    bool open = how == opens::before_takes && q.queued() == 0;
    while (!p.absorb(batch)) tact::detail::model_yield();
    if (how == opens::after_takes) open = q.queued() == 0;
    if (how == opens::unlooked) open = true;
    if (open)
      office.join(batch, sends[1]);
    else
      (void)office.post(q, sends[1]);
    office.run(q, batch, true);
    p.finish();
    q.finish();
  }

  void after() {
    office.drain(q);
    office.check({2, 1});
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  tact::model::model m{"claims against a parked owner and a sender"};
  m.check<claim_race<false, then::run>>("claim and run: up to 3 preemptions", search::bounded(3));
  m.check<claim_race<true, then::run>>("claim only while the owner sleeps: up to 2 preemptions",
                                       search::bounded(2));
  m.check<claim_race<false, then::hand_back>>("claim and hand back: up to 2 preemptions",
                                              search::bounded(2));
  m.check<claim_race<false, then::run>>("claim and run: random", search::random(100000));
  m.check<claim_race<true, then::hand_back>>("claim while asleep, hand back: random",
                                             search::random(100000));
  m.check<claim_race<false, then::keep_and_rejoin>>("keep and rejoin: up to 2 preemptions",
                                                    search::bounded(2));
  m.check<claim_race<false, then::keep_and_rejoin>>("keep and rejoin: random",
                                                    search::random(100000));
  m.check<claim_race<false, then::absorb_and_merge>>("absorb and merge: up to 2 preemptions",
                                                     search::bounded(2));
  m.check<claim_race<false, then::absorb_and_merge>>("absorb and merge: random",
                                                     search::random(100000));
  m.check<solo_race<opens::after_takes>>(
      "solo turn, merges unchecked once all is taken: up to 3 preemptions", search::bounded(3));
  m.check<solo_race<opens::after_takes>>("solo turn, merges unchecked once all is taken: random",
                                         search::random(100000));
  m.mutant<solo_race<opens::before_takes>>(
      "mutant: unchecked merges opened before the sender's queue is taken", search::bounded(2),
      rl::test_result_user_assert_failed);
  m.mutant<solo_race<opens::unlooked>>("mutant: unchecked merges opened without a look",
                                       search::bounded(2), rl::test_result_user_assert_failed);
  m.mutant<claim_race<false, then::merge_unchecked>>(
      "mutant: a merge overtakes its sender's mail", search::bounded(2),
      rl::test_result_user_assert_failed);
  m.mutant<claim_race<false, then::absorb_and_merge>>(
      "mutant: absorb reads being_processed relaxed", search::bounded(2),
      rl::test_result_data_race, "work_queue::absorb", std::memory_order_relaxed);
  m.mutant<claim_race<false, then::rejoin_unchecked>>(
      "mutant: a rejoin overtakes its sender's mail", search::bounded(2), rl::test_result_user_assert_failed);
  m.mutant<claim_race<false, then::run>>("mutant: claim reads being_processed relaxed",
                                         search::bounded(3), rl::test_result_data_race,
                                         "work_queue::claim", std::memory_order_relaxed);
  m.mutant<claim_race<true, then::hand_back_no_wake>>(
      "mutant: a claim handed back wakes nobody", search::bounded(3), rl::test_result_livelock);
  return m.main(argc, argv);
}
