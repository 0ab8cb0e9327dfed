#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

namespace {

using tact::test::sequenced;

// Checks per-sender FIFO and that it never runs two behaviours at once.
// Its plain counters are only read by the test thread after quiescence.
struct checker : tact::actor {
  std::atomic<bool> in_receive{false};
  tact::test::fifo_check fifo;
  std::uint64_t overlaps = 0;

  tact::allocation receive(sequenced& m) {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
    fifo.accept(m);
    // Widen the window in which an overlap would be seen.
    for (int spin = 0; spin < 20; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);
    in_receive.store(false, std::memory_order_release);
    return Nodelete;
  }
};

struct go : tact::message {};

// Sends its numbered messages one per behaviour, re-sending itself `go`, so
// senders on different queues interleave at the checker.
struct sender : tact::actor {
  sender(std::uint32_t id, std::uint64_t count, checker& target)
      : messages(count), target{&target} {
    for (std::uint64_t i = 0; i < count; ++i) {
      messages[i].sender = id;
      messages[i].seq = i;
    }
  }
  std::vector<sequenced> messages;
  checker* target;
  std::uint64_t sent = 0;
  go again;

  tact::allocation receive(go&) {
    *target | messages[sent++];
    if (sent == messages.size()) return Finished;
    *this | again;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("messages from each sender arrive in send order, one behaviour at a time") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  constexpr std::uint32_t actor_senders = 24;
  constexpr std::uint32_t thread_senders = 3;
  const std::uint64_t per_sender = tact::test::scaled(20'000);

  tact::actor_system system{{.workers = workers}};
  checker target;
  std::vector<std::unique_ptr<sender>> senders;
  for (std::uint32_t s = 0; s < actor_senders; ++s)
    senders.push_back(std::make_unique<sender>(s, per_sender, target));
  for (auto& s : senders) *s | s->again;

  // Other threads send directly, racing the actors.
  // Built in place: copies of a prototype would be destroyed unsent.
  std::vector<std::vector<sequenced>> direct(thread_senders);
  for (auto& row : direct) row = std::vector<sequenced>(per_sender);
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < thread_senders; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < per_sender; ++i) {
        direct[t][i].sender = actor_senders + t;
        direct[t][i].seq = i;
        target | direct[t][i];
      }
    });
  for (std::thread& t : threads) t.join();
  system.await_quiescence();

  CHECK(target.overlaps == 0);
  CHECK(target.fifo.clean());
  CHECK(target.fifo.received() == (actor_senders + thread_senders) * per_sender);
  for (std::uint32_t s = 0; s < actor_senders + thread_senders; ++s)
    CHECK(target.fifo.next(s) == per_sender);
  CHECK(tact::test::conservation_of(system));
  target | tact::finished_msg;
  system.stop();
}

TEST_CASE("an actor's sends to an actor on its own queue keep their order") {
  // One queue: every send is a same-queue send, mixing the local batch and
  // (once its budget is spent) the mailbox.
  const std::uint32_t budget = GENERATE(0u, 1u, 7u, 256u);
  tact::actor_system system{{.workers = 1, .local_batch = budget}};
  const std::uint64_t count = tact::test::scaled(50'000);
  checker target;
  sender source{0, count, target};
  source | source.again;
  system.await_quiescence();
  CHECK(target.fifo.clean());
  CHECK(target.fifo.received() == count);
  CHECK(tact::test::conservation_of(system));
  CHECK((system.stats().total.local_sends > 0) == (budget > 0));
  target | tact::finished_msg;
  system.stop();
}
