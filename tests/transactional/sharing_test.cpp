#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <tact/defaults.hpp>
#include <tact/transactional.hpp>

#include "executor/executor.hpp"
#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Which worker runs a parallel transactional actor's messages while
// another worker is hungry (docs/design.md, "Sharing a tree"): the hungry
// worker gets a share of the work the sender has besides the message (the
// oldest message on its stack), never the sender's only work. A chain's
// next link stays where it is; handed over, the chain crossed between the
// cores once per hungry spell. A fork's share goes to the hungry worker
// at once, never back to the sender.
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

namespace {

struct fork_now {};
struct branch {
  std::uint32_t n;
};

}  // namespace

TEST_CASE("a hungry worker gets a fork's first branch at once", "[transactional][sharing]") {
  // The root's commit sends two branches while the other worker is
  // hungry: the first goes on the stack, the second hands it to the
  // hungry worker and takes its place. The second then waits, on the
  // root's worker, until the first has run: only the hungry worker can
  // run it meanwhile. The root is its batch's last envelope, a short
  // batch's, from which a send may claim a queue: the share was posted
  // like any send, so it claimed the hungry worker's queue and came back
  // to run after the root's batch, behind the branch that waited for it
  // (this test then failed at the wait's patience), and the hungry
  // worker, its hunger taken, stayed idle.
  tact::actor_system system{{.workers = 2,
                             .gulp_budget = std::chrono::nanoseconds{0},
                             .adapt_every = std::chrono::nanoseconds{0}}};
  tact::detail::executor& ex = tact::detail::executor_of(system);
  std::thread::id root_ran;
  std::thread::id first_ran;
  std::atomic<bool> first_done{false};
  bool waited = false;
  const tx::actor_ref tree =
      tx::spawn(system, {[&](fork_now) {
                           root_ran = std::this_thread::get_id();
                           await_hungry(ex);
                           tx::send(tx::self(), branch{1});
                           tx::send(tx::self(), branch{2});
                         },
                         [&](branch b) {
                           if (b.n == 1) {
                             first_ran = std::this_thread::get_id();
                             first_done.store(true, std::memory_order_release);
                           } else {
                             waited = tact::test::eventually(
                                 [&] { return first_done.load(std::memory_order_acquire); });
                           }
                         }});
  tx::send(tree, fork_now{});
  system.await_quiescence();
  CHECK(waited);
  CHECK(first_ran != root_ran);
  CHECK(tact::test::conservation_of(system));
  system.stop();
}
