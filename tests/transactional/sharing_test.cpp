#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <tact/defaults.hpp>
#include <tact/transactional.hpp>

#include "executor/executor.hpp"
#include "support/invariants.hpp"

// Which worker runs a parallel transactional actor's messages while
// another worker is hungry (docs/design.md, "Sharing a tree"): the hungry
// worker gets a share of the work the sender has besides the message (the
// oldest message on its stack), never the sender's only work. A chain's
// next link stays where it is; handed over, the chain crossed between the
// cores once per hungry spell.
//
// Two workers; no governor (it would stand one down) and no gulp budget
// (it would end the batch, and a stack flushed into a queue may be
// stolen): what each link does next is then the placement alone. The
// chain runs from its worker's stack, in the batch that took its first
// link; the other worker turns hungry while link `hungry_at` waits for
// it, far enough into the batch that a send from it claims no queue (a
// claim would bring a link handed over back to the sender's worker).
namespace {

namespace tx = tact::tx;

struct chain_link {
  std::uint32_t n;
};

constexpr std::uint32_t hungry_at = 2 * tact::defaults::claim_batch_most;
constexpr std::uint32_t chain_length = 200;

// On the worker running the caller: until the other worker has swept its
// queues empty often enough to be hungry.
void await_hungry(tact::detail::executor& ex) {
  while (ex.hungry_workers().load(std::memory_order_relaxed) == 0) std::this_thread::yield();
}

}  // namespace

TEST_CASE("a parallel actor's chain stays on its worker while the other worker is hungry",
          "[transactional][sharing]") {
  tact::actor_system system{{.workers = 2,
                             .gulp_budget = std::chrono::nanoseconds{0},
                             .adapt_every = std::chrono::nanoseconds{0}}};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  // Where each link ran: written by one link at a time (each is sent by
  // the one before), read once the system is quiescent.
  std::vector<std::thread::id> ran(chain_length + 1);
  const tx::actor_ref chain = tx::spawn(system, {[&ex, &ran](chain_link l) {
                                          ran[l.n] = std::this_thread::get_id();
                                          if (l.n == hungry_at) await_hungry(ex);
                                          if (l.n < chain_length)
                                            tx::send(tx::self(), chain_link{l.n + 1});
                                        }});
  tx::send(chain, chain_link{0});
  system.await_quiescence();
  std::uint32_t elsewhere = 0;
  for (const std::thread::id& id : ran) elsewhere += id != ran[0] ? 1 : 0;
  CHECK(elsewhere == 0);
  CHECK(tact::test::conservation_of(system));
  system.stop();
}
