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

namespace {

// The case below: a parent made from main makes children, inside a
// behaviour, and sends each a burst of letters; a child, at its first
// letter, sends itself a burst of numbered messages, and one more at
// each later letter.
struct from_parent : tact::message {};
struct to_self final : tact::actor {
  static constexpr std::size_t first_burst = 40;
  to_self(tact::actor& parent, std::size_t letters) : actor{parent.system()} {
    const std::size_t count = first_burst + letters - 1;
    own.reserve(count);  // built in place: a copy destroyed unsent is reported
    for (std::size_t i = 0; i < count; ++i) own.emplace_back(0, i);
  }
  std::vector<sequenced> own;
  std::size_t sent = 0;
  std::size_t heard = 0;
  tact::test::fifo_check fifo;

  tact::allocation receive(from_parent&) {
    const std::size_t n = heard++ == 0 ? first_burst : 1;
    for (std::size_t i = 0; i < n; ++i) *this | own[sent++];
    return Nodelete;
  }
  tact::allocation receive(sequenced& m) {
    fifo.accept(m);
    return Nodelete;
  }
};
struct burst_parent final : tact::actor {
  burst_parent(tact::actor_system& system, std::size_t letters) : actor{system}, burst{letters} {}
  std::size_t burst;
  // Two children, made one after the other: they take two of the worker's
  // queues, so one of them is not on the parent's.
  std::vector<from_parent> letters[2];
  std::unique_ptr<to_self> children[2];
  tact::allocation receive(go&) {
    for (int c = 0; c < 2; ++c) {
      letters[c].resize(burst);
      children[c] = std::make_unique<to_self>(*this, burst);
    }
    for (int c = 0; c < 2; ++c)
      for (from_parent& l : letters[c]) *children[c] | l;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("an actor's sends to itself keep their order when it ran in another actor's turn") {
  // How the engine runs it, at one worker: a child's first letter goes on
  // the worker's stack and takes the child's queue along; the next ones
  // join the parent's batch until it is long enough, then the child's
  // queue's own batch (claimed), then its mailbox. So the child first
  // runs in its parent's batch, where its sends to itself take its
  // queue's mailbox; then its queue's batch runs, with letters in it, and
  // its sends to itself must go behind that mail. At two workers the
  // same may happen, or not.
  const std::uint32_t workers = GENERATE(1u, 2u);
  const std::size_t burst = GENERATE(8u, 20u, 40u, 80u, 200u);
  CAPTURE(workers, burst);
  tact::actor_system system{{.workers = workers, .queues = 4 * workers}};
  burst_parent parent{system, burst};
  go start;
  parent | start;
  system.await_quiescence();
  for (auto& child : parent.children) {
    CHECK(child->heard == burst);
    CHECK(child->sent == to_self::first_burst + burst - 1);
    CHECK(child->fifo.received() == child->sent);
    CHECK(child->fifo.out_of_order() == 0);
    CHECK(child->fifo.duplicates() == 0);
    *child | tact::finished_msg;
  }
  parent | tact::finished_msg;
  system.stop();
}
