#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// A message to an actor made by a behaviour, with nothing else ever sent
// to it, runs next, from its worker's stack (docs/design.md, "Depth
// first"): a tree of actors unfolds depth first, and only a path of it is
// alive at a time. What these tests pin, from the user's side: how many
// nodes of such a tree are alive at once, and that the order and
// once-only delivery of every message hold however the stack is used:
// messages behind stacked ones, a full stack, a behaviour that waits, a
// turn cut short at its budget, sends from other threads racing.
namespace {

using namespace std::chrono_literals;
using tact::test::sequenced;

// ---- a full binary tree of actors, each made by its parent ----

std::atomic<std::int64_t> nodes_alive{0};
std::atomic<std::int64_t> nodes_peak{0};

void note_made() {
  const std::int64_t now = nodes_alive.fetch_add(1, std::memory_order_relaxed) + 1;
  std::int64_t peak = nodes_peak.load(std::memory_order_relaxed);
  while (now > peak && !nodes_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

struct grow : tact::message {
  int depth = 0;
};
struct leaves : tact::message {
  std::int64_t count = 0;
};

// Told to grow to `depth`, a node makes two children of depth - 1 and
// answers its parent the sum of their leaf counts; a leaf answers 1. It
// is gone once it has answered; the root keeps its count. Its sends go
// straight to the actor, or through typed handles.
class tree_node final : public tact::actor {
 public:
  tree_node(tact::actor_system& system, bool through_handles)
      : actor{system}, through_handles_{through_handles} {
    note_made();
  }
  tree_node(tree_node& parent, leaves& answer)
      : actor{parent.system()},
        parent_{&parent},
        answer_{&answer},
        through_handles_{parent.through_handles_} {
    note_made();
  }
  ~tree_node() override { nodes_alive.fetch_sub(1, std::memory_order_relaxed); }

  grow order;
  std::int64_t count() const noexcept { return count_; }

  tact::allocation receive(grow& g) {
    if (g.depth == 0) return answer(1);
    for (auto& [child, slot] : children_) {
      slot.emplace();
      child = &system().spawn<tree_node>(*this, *slot);
      child->order.depth = g.depth - 1;
    }
    for (auto& [child, slot] : children_) {
      if (through_handles_)
        tact::handle<grow>{*child} | child->order;
      else
        *child | child->order;
    }
    return Nodelete;
  }
  tact::allocation receive(leaves& l) {
    count_ += l.count;
    return ++answered_ == 2 ? answer(count_) : Nodelete;
  }

 private:
  tact::allocation answer(std::int64_t count) {
    count_ = count;
    if (parent_ == nullptr) return Finished;
    answer_->count = count;
    if (through_handles_)
      tact::handle<leaves>{*parent_} | *answer_;
    else
      *parent_ | *answer_;
    return Delete;
  }

  tree_node* parent_ = nullptr;
  leaves* answer_ = nullptr;  // the parent's slot for this node's answer
  std::pair<tree_node*, std::optional<leaves>> children_[2];
  std::int64_t count_ = 0;
  int answered_ = 0;
  bool through_handles_ = false;
};

struct tree_run {
  std::int64_t leaves;
  std::int64_t peak;       // nodes alive at once, the root included
  std::uint64_t messages;  // delivered
};

tree_run unfold(tact::system_config config, int depth, bool through_handles = false) {
  nodes_alive.store(0);
  nodes_peak.store(0);
  tact::actor_system system{config};
  tree_node root{system, through_handles};
  const std::uint64_t before = system.stats().total.messages_processed;
  root.order.depth = depth;
  root | root.order;
  system.await_quiescence();
  tree_run run{root.count(), nodes_peak.load(), system.stats().total.messages_processed - before};
  system.stop();
  return run;
}

// 2^(depth + 1) - 1 nodes, each told to grow once and all but the root
// answering once.
std::uint64_t tree_messages(int depth) { return 2 * ((std::uint64_t{2} << depth) - 1) - 1; }

}  // namespace

TEST_CASE("a tree of actors made inside behaviours unfolds depth first") {
  // 16,383 nodes. Breadth first (each queue first in, first out), most of
  // them are alive at once; depth first, a path of 13 and the siblings
  // waiting along it.
  constexpr int depth = 13;
  const std::uint32_t workers = GENERATE(1u, 2u);
  const bool through_handles = GENERATE(false, true);
  CAPTURE(workers, through_handles);
  // Turns without a time budget: none is cut short, so the stack never
  // goes back into a batch and the order is depth first throughout.
  const tree_run run = unfold({.workers = workers, .gulp_budget = 0ns}, depth, through_handles);
  CHECK(run.leaves == std::int64_t{1} << depth);
  CHECK(run.messages == tree_messages(depth));
  // Two workers may each unfold a subtree.
  CHECK(run.peak <= 4 * depth * workers);
  CHECK(nodes_alive.load() == 0);
}

TEST_CASE("a tree of actors unfolds whole whatever the turn budget and worker count") {
  // With the default budget, a turn that ends puts its stack back into
  // its batch; with a budget of a nanosecond, every turn does.
  constexpr int depth = 12;
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::int64_t budget_ns = GENERATE(std::int64_t{100'000}, std::int64_t{1});
  CAPTURE(workers, budget_ns);
  const tree_run run =
      unfold({.workers = workers, .gulp_budget = std::chrono::nanoseconds{budget_ns}}, depth);
  CHECK(run.leaves == std::int64_t{1} << depth);
  CHECK(run.messages == tree_messages(depth));
  CHECK(nodes_alive.load() == 0);
}

// ---- order and once-only delivery through the stack ----

namespace {

// A random tree: a node made by its parent gets a burst of numbered
// messages from it, the first of which (number 0) starts it (the first
// goes on the stack, the rest behind it; beyond 64 the stack is full),
// and numbered pokes from a thread outside, racing in as soon as the
// node exists. When it starts it makes its children and sends them
// their bursts; some nodes then ask a long-lived actor something,
// waiting with their children's messages on the stack. A node finishes
// once it has everything and its children have finished. The root is
// started from outside.
constexpr std::uint64_t parent_sender = 0;
constexpr std::uint64_t poke_sender = 1;
constexpr std::size_t pokes_each = 3;

struct shape {
  std::uint32_t children;
  std::uint32_t burst;
  bool asks;
};

// The node's shape from the run's seed and its number alone, so the test
// knows the whole tree before it runs.
shape shape_of(std::uint64_t seed, std::uint64_t id, std::uint32_t depth) {
  const std::uint64_t r = tact::test::mix(seed, id);
  return {depth == 0 ? 0u : static_cast<std::uint32_t>(r % 5),
          1 + static_cast<std::uint32_t>((r >> 8) % 150), (r >> 20) % 8 == 0};
}

struct echo_request : tact::request<int> {};
struct echo : tact::actor {
  using actor::actor;
  tact::allocation receive(echo_request& m) {
    m.reply(1);
    return Nodelete;
  }
};

struct finished_child : tact::message {};

struct registry {
  explicit registry(std::size_t capacity) : slots(capacity) {}
  std::vector<std::atomic<struct order_node*>> slots;
  std::atomic<std::size_t> count{0};
};

struct order_node final : tact::actor {
  order_node(tact::actor_system& system, std::uint64_t seed, std::uint64_t id, std::uint32_t depth,
             echo& asked, registry& made)
      : actor{system}, seed_{seed}, id_{id}, depth_{depth}, asked_{&asked}, made_{&made} {
    publish();
  }
  order_node(order_node& parent, std::uint64_t id)
      : actor{parent.system()},
        seed_{parent.seed_},
        id_{id},
        depth_{parent.depth_ - 1},
        asked_{parent.asked_},
        made_{parent.made_},
        parent_{&parent} {
    done_.emplace();
    publish();
  }

  // Sent by the poking thread.
  sequenced pokes[pokes_each] = {{poke_sender, 0}, {poke_sender, 1}, {poke_sender, 2}};
  tact::test::fifo_check fifo;
  std::uint64_t asks_answered = 0;

  tact::allocation receive(sequenced& m) {
    fifo.accept(m);
    if (m.sender == parent_sender && m.seq == 0) begin();
    if (m.sender == poke_sender) poked_ = true;
    // The rest of the children's bursts in a later behaviour, once poked:
    // by then the stack, the queues held and the actors' states may all
    // have changed.
    if (started_ && poked_ && !rest_sent_) {
      rest_sent_ = true;
      for (auto& l : links_)
        for (std::size_t i = half(*l); i < l->burst.size(); ++i) *l->child | l->burst[i];
    }
    return maybe_done();
  }
  tact::allocation receive(finished_child&) {
    ++children_done_;
    return maybe_done();
  }

  std::uint64_t id() const noexcept { return id_; }
  // How many its parent sends it (the root gets one, from outside).
  std::uint32_t burst() const noexcept {
    return parent_ != nullptr ? shape_of(seed_, id_, depth_).burst : 1;
  }
  std::uint32_t depth() const noexcept { return depth_; }

 private:
  struct link {
    link(order_node& c, std::uint32_t n) : child{&c} {
      burst.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i) burst.emplace_back(parent_sender, i);
    }
    order_node* child;
    std::vector<sequenced> burst;
  };

  void begin() {
    const shape s = shape_of(seed_, id_, depth_);
    started_ = true;
    for (std::uint32_t c = 0; c < s.children; ++c) {
      order_node& child = system().spawn<order_node>(*this, id_ * 5 + c + 1);
      const std::uint32_t burst = shape_of(seed_, child.id_, child.depth_).burst;
      links_.push_back(std::make_unique<link>(child, burst));
    }
    // Every child its first message, then the first half of its burst.
    for (auto& l : links_) *l->child | l->burst[0];
    for (auto& l : links_)
      for (std::size_t i = 1; i < half(*l); ++i) *l->child | l->burst[i];
    if (s.asks && tact::ask(*asked_, echo_request{}, 60s).has_value()) ++asks_answered;
  }

  static std::size_t half(const link& l) { return std::max<std::size_t>(1, l.burst.size() / 2); }

  void publish() {
    made_->slots[made_->count.fetch_add(1, std::memory_order_relaxed)].store(
        this, std::memory_order_release);
  }
  // Pokes may come before the start.
  tact::allocation maybe_done() {
    if (!started_ || fifo.received() != burst() + pokes_each || children_done_ != links_.size())
      return Nodelete;
    if (parent_ != nullptr) *parent_ | *done_;
    return Finished;
  }

  std::uint64_t seed_;
  std::uint64_t id_;
  std::uint32_t depth_;
  echo* asked_;
  registry* made_;
  order_node* parent_ = nullptr;
  std::vector<std::unique_ptr<link>> links_;
  std::optional<finished_child> done_;  // the root has nobody to tell
  std::size_t children_done_ = 0;
  bool started_ = false;
  bool poked_ = false;
  bool rest_sent_ = false;
};

std::uint64_t count_nodes(std::uint64_t seed, std::uint64_t id, std::uint32_t depth) {
  std::uint64_t n = 1;
  const shape s = shape_of(seed, id, depth);
  for (std::uint32_t c = 0; c < s.children; ++c) n += count_nodes(seed, id * 5 + c + 1, depth - 1);
  return n;
}

}  // namespace

TEST_CASE("messages through workers' stacks arrive once each, in each sender's order") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t seed = tact::test::test_seed();
  INFO("TACT_TEST_SEED=" << seed << " workers " << workers);
  constexpr std::uint32_t depth = 7;
  const std::uint64_t trees = tact::test::scaled(8);

  for (std::uint64_t t = 0; t < trees; ++t) {
    const std::uint64_t tree_seed = tact::test::mix(seed, t);
    const std::uint64_t total = count_nodes(tree_seed, 0, depth);
    CAPTURE(t, total);
    registry made{total};
    tact::actor_system system{{.workers = workers}};
    echo asked{system};
    auto* root = new order_node{system, tree_seed, 0, depth, asked, made};

    // Pokes from outside, as soon as each node is published.
    std::thread poker{[&] {
      for (std::size_t next = 0; next < total;) {
        order_node* n = next < made.count.load(std::memory_order_acquire)
                            ? made.slots[next].load(std::memory_order_acquire)
                            : nullptr;
        if (n == nullptr) {
          std::this_thread::yield();
          continue;
        }
        for (sequenced& poke : n->pokes) *n | poke;
        ++next;
      }
    }};
    sequenced go{parent_sender, 0};
    *root | go;
    poker.join();
    system.await_quiescence();

    REQUIRE(made.count.load() == total);
    std::uint64_t finished = 0, asks = 0, expected_asks = 0;
    for (std::size_t i = 0; i < total; ++i) {
      order_node* n = made.slots[i].load();
      const shape s = shape_of(tree_seed, n->id(), n->depth());
      if (n->finished()) ++finished;
      asks += n->asks_answered;
      if (s.asks) ++expected_asks;
      CHECK(n->fifo.duplicates() == 0);
      CHECK(n->fifo.out_of_order() == 0);
      CHECK(n->fifo.received() == n->burst() + pokes_each);
    }
    CHECK(finished == total);
    CHECK(asks == expected_asks);
    asked | tact::finished_msg;
    system.stop();
    for (std::size_t i = 0; i < total; ++i) delete made.slots[i].load();
  }
}

// ---- a message sent aside keeps later ones off the stack ----

namespace {

// The receiver: the numbers it got, in the order it got them.
struct listener final : tact::actor {
  explicit listener(tact::actor& parent) : actor{parent.system()} {}
  std::vector<std::uint64_t> got;
  tact::allocation receive(sequenced& m) {
    got.push_back(m.seq);
    return Nodelete;
  }
};
struct filler final : tact::actor {
  explicit filler(tact::actor& parent) : actor{parent.system()} {}
  tact::message poke;
  tact::allocation receive(tact::message&) { return Delete; }
};
struct again : tact::message {};
struct start : tact::message {};

// Made by a behaviour, it makes a listener, fills its worker's stack with
// messages to fillers, and then sends the listener its first message
// (which cannot take the full stack, and goes aside, into the batch) and
// itself a second turn (also aside, but ahead of nothing of the
// listener's). In that turn, the stack empty again, it sends the listener
// its second message: the listener has been sent nothing by a stack, so
// only the record that a message went aside keeps this one from taking
// the stack and overtaking the first.
struct aside_sender final : tact::actor {
  explicit aside_sender(tact::actor& parent) : actor{parent.system()} {}
  listener* heard = nullptr;
  sequenced first{0, 0};
  sequenced second{0, 1};
  again later;
  start go;
  tact::allocation receive(start&) {
    heard = &system().spawn<listener>(*this);
    for (std::uint32_t i = 0; i < tact::defaults::stack_most; ++i) {
      filler& f = system().spawn<filler>(*this);
      f | f.poke;
    }
    *this | later;
    *heard | first;
    return Nodelete;
  }
  tact::allocation receive(again&) {
    *heard | second;
    return Nodelete;
  }
};

// Made by main: it makes the sender, so that the sender's behaviours run
// from a worker's batch and stack.
struct aside_root final : tact::actor {
  using actor::actor;
  aside_sender* made = nullptr;
  start go;
  tact::allocation receive(start&) {
    made = &system().spawn<aside_sender>(*this);
    *made | made->go;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a message that went aside keeps its sender's later ones to that actor off the stack") {
  // One worker, one queue, no turn budget: the run is the same every time.
  tact::actor_system system{{.workers = 1, .gulp_budget = 0ns}};
  aside_root root{system};
  root | root.go;
  system.await_quiescence();
  REQUIRE(root.made != nullptr);
  REQUIRE(root.made->heard != nullptr);
  CHECK(root.made->heard->got == std::vector<std::uint64_t>{0, 1});
  *root.made->heard | tact::finished_msg;
  *root.made | tact::finished_msg;
  root | tact::finished_msg;
  system.await_quiescence();
  delete root.made->heard;
  delete root.made;
  system.stop();
}

// ---- transactional actors ----

namespace {

namespace tx = tact::tx;

// The binary tree on parallel actors: a node creates two children and
// becomes a summer of their answers. A parallel actor's messages promise
// no order, so they take a worker's stack whenever no other worker idles;
// the two answers of a node may also race on two workers, and the loser
// of the become runs again against the summer that won.
tx::behaviour summer(const tx::actor_ref& parent, int answered, std::int64_t sum) {
  return {[parent, answered, sum](std::int64_t count) {
    if (answered == 1)
      tx::send(parent, sum + count);
    else
      tx::become(summer(parent, 1, sum + count));
  }};
}

tx::behaviour tx_tree_node() {
  return {[](const tx::actor_ref& parent, int depth) {
    if (depth == 0) {
      tx::send(parent, std::int64_t{1});
      return;
    }
    tx::send(tx::create(tx_tree_node()), tx::self(), depth - 1);
    tx::send(tx::create(tx_tree_node()), tx::self(), depth - 1);
    tx::become(summer(parent, 0, 0));
  }};
}

}  // namespace

TEST_CASE("a tree of transactional actors unfolds whole through workers' stacks") {
  constexpr int depth = 12;
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::int64_t budget_ns = GENERATE(std::int64_t{100'000}, std::int64_t{1});
  CAPTURE(workers, budget_ns);
  tact::actor_system system{
      {.workers = workers, .gulp_budget = std::chrono::nanoseconds{budget_ns}}};
  std::atomic<std::int64_t> counted{0};
  const tx::actor_ref report =
      tx::spawn(system, {[&counted](std::int64_t n) { counted.store(n); }});
  const std::uint64_t before = system.stats().total.tx_commits;
  tx::send(tx::spawn(system, tx_tree_node()), report, depth);
  system.await_quiescence();
  CHECK(counted.load() == std::int64_t{1} << depth);
  const tact::worker_stats totals = system.stats().total;
  // Every node's order and every answer, the root's to `report` included,
  // committed once each.
  CHECK(totals.tx_commits - before == tree_messages(depth) + 1);
  CHECK(totals.tx_rollbacks == 0);
  CHECK(totals.tx_unmatched == 0);
  system.stop();
}
