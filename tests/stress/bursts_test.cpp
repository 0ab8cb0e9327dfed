#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Bursts of sends from every behaviour, to several receivers at once, so
// that a worker's outbox (the sends it holds back until the batch ends)
// fills, is posted whole, and is posted early: when it is full, when a
// batch is cut at a tiny gulp budget, when a behaviour waits in an ask
// between two halves of its burst, and when a send that does not join the
// outbox (to an actor's own queue past its budget, a claim) comes after
// held ones. Workers: 1, 2 and 8 (more than the cores), every steal
// policy. Checked: every message arrives exactly once, in send order per
// sender and receiver, and each actor runs one message at a time. A
// failing run replays from TACT_TEST_SEED.
namespace {

using namespace std::chrono_literals;

constexpr std::size_t nodes = 256;
constexpr std::uint32_t fan = 6;    // receivers per burst
constexpr std::uint32_t depth = 8;  // messages to each receiver per burst

struct echo : tact::request<std::uint64_t> {
  explicit echo(std::uint64_t v) : value{v} {}
  std::uint64_t value;
};

// Runs a burst, then passes itself on, until its hops run out.
struct command : tact::message {
  command(std::uint64_t r, std::uint64_t hops) : rng{r}, hops_left{hops} {}
  std::uint64_t rng;
  std::uint64_t hops_left;
  std::uint64_t next_random() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  }
};

struct oracle : tact::actor {
  tact::allocation receive(echo& e) {
    e.reply(e.value + 1);
    return Nodelete;
  }
};

struct node : tact::actor {
  std::uint64_t self = 0;
  std::vector<std::unique_ptr<node>>* all = nullptr;
  oracle* wise = nullptr;
  std::vector<std::uint64_t> next_seq = std::vector<std::uint64_t>(nodes, 0);  // per receiver
  tact::test::fifo_check arrivals;
  std::uint64_t commands = 0;
  std::uint64_t wrong_answers = 0;
  int inside = 0;
  std::uint64_t overlaps = 0;

  tact::allocation receive(tact::test::sequenced& m) {
    if (++inside != 1) ++overlaps;
    arrivals.accept(m);
    --inside;
    return Nodelete;
  }

  tact::allocation receive(command& c) {
    if (++inside != 1) ++overlaps;
    ++commands;
    std::uint64_t to[fan];
    for (auto& t : to) t = c.next_random() % nodes;
    // Some bursts wait halfway: the first half must be posted before the
    // behaviour waits, and stay ahead of the second.
    const bool asks = c.next_random() % 4 == 0;
    for (std::uint32_t d = 0; d < depth; ++d) {
      if (asks && d == depth / 2) {
        --inside;  // other messages of this actor wait meanwhile, but count none
        const auto r = tact::ask(*wise, echo{d}, 60s);
        ++inside;
        if (!r || *r != d + 1) ++wrong_answers;
      }
      for (const std::uint64_t t : to)
        tact::send_new<tact::test::sequenced>(*(*all)[t], self, next_seq[t]++);
    }
    if (c.hops_left > 0) {
      --c.hops_left;
      *(*all)[c.next_random() % nodes] | c;
    }
    --inside;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("bursts held in outboxes arrive exactly once, in order per sender and receiver") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const auto steal = GENERATE(tact::steal_policy::none, tact::steal_policy::random,
                              tact::steal_policy::longest_victim);
  // The default budget, and one so small that batches are cut mid-burst.
  const auto budget = GENERATE(std::chrono::nanoseconds{tact::defaults::gulp_budget},
                               std::chrono::nanoseconds{200});
  const std::uint64_t seed = tact::test::test_seed();
  const std::uint64_t walkers = tact::test::scaled(64);
  const std::uint64_t hops = tact::test::scaled(300);
  CAPTURE(workers, static_cast<int>(steal), budget.count(), seed, walkers, hops);

  tact::actor_system system{
      tact::test::configured({.workers = workers, .gulp_budget = budget, .steal = steal})};
  oracle wise;
  std::vector<std::unique_ptr<node>> all;
  for (std::size_t i = 0; i < nodes; ++i) {
    all.push_back(std::make_unique<node>());
    all.back()->self = i;
    all.back()->all = &all;
    all.back()->wise = &wise;
  }
  std::vector<command> walking;
  walking.reserve(walkers);
  for (std::uint64_t w = 0; w < walkers; ++w)
    walking.emplace_back(tact::test::mix(seed, w) | 1, hops);
  for (std::uint64_t w = 0; w < walkers; ++w) *all[w % nodes] | walking[w];
  system.await_quiescence();
  CHECK(tact::test::conservation_of(system));

  std::uint64_t commands = 0;
  std::uint64_t received = 0;
  std::uint64_t sent = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t wrong_answers = 0;
  std::uint64_t overlaps = 0;
  for (const auto& n : all) {
    commands += n->commands;
    received += n->arrivals.received();
    out_of_order += n->arrivals.out_of_order();
    duplicates += n->arrivals.duplicates();
    wrong_answers += n->wrong_answers;
    overlaps += n->overlaps;
    for (std::size_t from = 0; from < nodes; ++from)
      if (all[from]->next_seq[n->self] != n->arrivals.next(from)) ++out_of_order;
    for (const std::uint64_t s : n->next_seq) sent += s;
  }
  CHECK(commands == walkers * (hops + 1));
  CHECK(sent == commands * fan * depth);
  CHECK(received == sent);
  CHECK(out_of_order == 0);
  CHECK(duplicates == 0);
  CHECK(wrong_answers == 0);
  CHECK(overlaps == 0);

  for (auto& n : all) *n | tact::finished_msg;
  wise | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
}
