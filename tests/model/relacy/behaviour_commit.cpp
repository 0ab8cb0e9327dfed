// The behaviour-slot commit of transactional actors (xTActors: BECOME by
// compare-and-swap): src/transactional/behaviour_slot.hpp on the cell and
// behaviour_base of include/tact/detail/tx_core.hpp, with the replaced
// behaviour retired to the engine's epochs (src/executor/epochs.hpp).
//
// Two dispatches of one actor race a become each, as in run() in
// src/transactional/dispatch.cpp: pin, read the settled slot, run the
// behaviour (read its closure), build the next one, claim, install,
// retire the one replaced; a lost claim discards what it built and runs
// again against the new behaviour. Checks: each race has one winner and
// the loser's retry sees the winner's behaviour (the final closure counts
// both becomes); nobody reads a behaviour after it was freed, none is
// freed twice and none leaks (Relacy tracks the allocations); a
// behaviour's closure, written before it is installed, is seen complete.
//
// The same with every collect stalled (a limbo of one object is too long,
// see epochs.hpp, "A stalled epoch"): the epochs do not decide what is
// freed, the marks of epochs::protect do, behind the asymmetric fence.
//
// And two actors that share one behaviour (reference count 2) replace it
// at once: the count reaches zero once, and the reads of the closure by
// the one that lets go first happen before the delete by the other.
//
// Abstracted: staging, the sends a commit queues (commit_sends) and its
// on_commit actions; a message is the dispatch itself.
#include <tact/detail/atomic.hpp>

#include "executor/epochs.hpp"
#include "model.hpp"
#include "transactional/behaviour_slot.hpp"

namespace {

using tact::detail::epochs;
using tact::detail::tx::behaviour_base;
using tact::detail::tx::behaviour_in;
using tact::detail::tx::cell;

// A behaviour whose closure is one number. Destroying it writes the
// closure, as destroying captures does, so a read that the delete does not
// follow is a data race.
class counter final : public behaviour_base {
 public:
  explicit counter(int value) { closure_($) = value; }
  ~counter() override { closure_($) = -1; }
  bool dispatch(const tact::tx::message&) const override { return true; }
  int value() const { return closure_($); }

 private:
  rl::var<int> closure_;
};

int value_of(std::uintptr_t slot) {
  return static_cast<const counter*>(behaviour_in(slot))->value();
}

// How a commit lets go of the behaviour it replaced: kept until the end,
// when nobody runs anything (a grace period longer than any dispatch);
// retired to the epochs, pinned around the dispatch, and collected while
// others still run, as the engine does; the same with every collect a
// stalled one (epochs::protect's marks decide, not the epoch: the
// fallback for a worker descheduled while pinned), collected before the
// retirer unpins; or (a mutant) released at once.
enum class letting_go { at_the_end, epochs, stalled, at_once };

// Each thread becomes once on the one cell.
template <int Threads, letting_go how>
struct racing_becomes : rl::test_suite<racing_becomes<Threads, how>, Threads> {
  static constexpr bool retiring = how == letting_go::epochs || how == letting_go::stalled;
  cell actor;
  // Stalled: a limbo of one object is already too long.
  epochs reclamation{Threads, how == letting_go::stalled ? 1 : epochs::default_stalled_most};
  behaviour_base* replaced[Threads] = {};
  int commits = 0;

  void before() { tact::detail::tx::install(actor, new counter{0}); }

  void thread(unsigned self) {
    if (retiring) reclamation.pin(self);
    for (;;) {
      behaviour_base* const running =
          retiring
              ? reclamation.protect(
                    self, [this] { return behaviour_in(tact::detail::tx::settled_slot(actor)); })
              : behaviour_in(tact::detail::tx::settled_slot(actor));
      auto* const next = new counter{static_cast<const counter*>(running)->value() + 1};
      if (tact::detail::tx::claim(actor, running)) {
        tact::detail::tx::install(actor, next);
        if (how == letting_go::at_the_end) replaced[self] = running;
        if (retiring) reclamation.retire(self, running);
        if (how == letting_go::stalled) {
          // As the next dispatch would, moves its mark off the behaviour
          // it replaced; then collects, while others may still be pinned.
          reclamation.protect(self, [] { return static_cast<behaviour_base*>(nullptr); });
          reclamation.collect(self);
        }
        if (how == letting_go::at_once) running->release();
        ++commits;
        break;
      }
      next->release();  // discarded; run again against the new behaviour
    }
    if (retiring) {
      reclamation.unpin(self);
      reclamation.collect(self);
    }
  }

  void after() {
    RL_ASSERT(commits == Threads);
    const std::uintptr_t slot = actor.slot.load(std::memory_order_relaxed);
    RL_ASSERT(value_of(slot) == Threads);  // no become lost
    behaviour_in(slot)->release();
    for (behaviour_base* b : replaced)
      if (b != nullptr) b->release();
  }
};

// Two actors share a behaviour; each replaces it, and lets go of it once
// nobody can be running it through its slot any more.
struct shared_behaviour : rl::test_suite<shared_behaviour, 2> {
  cell actors[2];

  void before() {
    auto* const shared = new counter{0};
    shared->retain();
    for (cell& c : actors) tact::detail::tx::install(c, shared);
  }

  void thread(unsigned self) {
    cell& c = actors[self];
    behaviour_base* const running = behaviour_in(tact::detail::tx::settled_slot(c));
    auto* const next = new counter{static_cast<const counter*>(running)->value() + 1};
    RL_ASSERT(tact::detail::tx::claim(c, running));
    tact::detail::tx::install(c, next);
    running->release();
  }

  void after() {
    for (cell& c : actors) {
      const std::uintptr_t slot = c.slot.load(std::memory_order_relaxed);
      RL_ASSERT(value_of(slot) == 1);
      behaviour_in(slot)->release();
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  using tact::model::search;
  using enum letting_go;
  tact::model::model m{"behaviour-slot commit"};
  m.check<racing_becomes<2, at_the_end>>("two becomes on one actor: every interleaving",
                                         search::full());
  m.check<racing_becomes<2, epochs>>("... with the epochs: up to 3 preemptions",
                                     search::bounded(3));
  m.check<racing_becomes<3, epochs>>("three becomes, with the epochs: up to 1 preemption",
                                     search::bounded(1));
  m.check<racing_becomes<3, epochs>>("three becomes, with the epochs: random",
                                     search::random(100000));
  m.check<racing_becomes<2, stalled>>(
      "... every collect stalled, marks decide: up to 3 preemptions", search::bounded(3));
  m.check<racing_becomes<3, stalled>>("three becomes, every collect stalled: up to 1 preemption",
                                      search::bounded(1));
  m.check<racing_becomes<3, stalled>>("three becomes, every collect stalled: random",
                                      search::random(100000));
  m.check<shared_behaviour>("two actors replace a shared behaviour: every interleaving",
                            search::full());
  m.mutant<racing_becomes<2, at_once>>("mutant: the replaced behaviour freed at once",
                                       search::full(), rl::test_result_data_race);
  m.mutant<racing_becomes<2, at_the_end>>("mutant: claim() and install() relaxed", search::full(),
                                          rl::test_result_data_race,
                                          "tx::claim|tx::install", std::memory_order_relaxed);
  m.mutant<racing_becomes<2, epochs>>("mutant: the epochs pin acquire-release, not seq_cst",
                                      search::bounded(2), rl::test_result_data_race, "epochs::pin", std::memory_order_acq_rel);
  // Relacy orders a sequentially consistent load as a fence would, more
  // strongly than C++ or an x86 core (a plain load there, which may pass
  // an earlier store): these weaken the slot's loads to acquire, as the
  // core runs them, so that the fences alone order protect()'s mark. The
  // heavy fence alone is not left out: it stands for a barrier the kernel
  // runs on the reader's core, which Relacy cannot run on another
  // thread's behalf, so the model makes protect()'s half a full fence, and
  // that orders the pair by itself here.
  m.check<racing_becomes<2, stalled>>(
      "... with the slot's loads acquire, as an x86 core runs them: up to 3 preemptions",
      search::bounded(3), "settled_slot", std::memory_order_acquire);
  m.mutant<racing_becomes<2, stalled>>(
      "mutant: ... and protect() and the stalled collect unfenced", search::bounded(3),
      rl::test_result_data_race, "settled_slot|light_fence|heavy_fence", std::memory_order_acquire);
  m.mutant<racing_becomes<2, stalled>>("mutant: ... and protect() unfenced", search::bounded(3),
                                       rl::test_result_data_race, "settled_slot|light_fence",
                                       std::memory_order_acquire);
  m.mutant<shared_behaviour>("mutant: release() counts down relaxed", search::full(),
                             rl::test_result_data_race,
                             "behaviour_base::release", std::memory_order_relaxed);
  return m.main(argc, argv);
}
