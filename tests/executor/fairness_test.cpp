#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// The gulp budget: a worker runs one gulp of a queue for at most
// system_config::gulp_budget (give or take a message) before the worker's
// other queues get their turn, so a flood into one queue delays a message
// in another queue of the same worker by about that long, not by the
// whole flood.
using namespace std::chrono_literals;

namespace {

struct flood_msg : tact::message {};
struct probe_msg : tact::message {};
struct hold_msg : tact::message {};

// Each flood message takes at least `each` of wall time.
struct flooded : tact::actor {
  explicit flooded(std::chrono::nanoseconds each) : each_{each} {}
  std::atomic<std::uint64_t> received{0};
  tact::allocation receive(flood_msg&) {
    tact::test::busy_for(each_);
    received.fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }
  std::chrono::nanoseconds each_;
};

// Records how much of the flood had run when the probe ran.
struct probe : tact::actor {
  explicit probe(const flooded& f) : flood_{f} {}
  std::atomic<std::uint64_t> flood_before{~std::uint64_t{0}};
  tact::allocation receive(probe_msg&) {
    flood_before.store(flood_.received.load(std::memory_order_relaxed));
    return Nodelete;
  }
  const flooded& flood_;
};

// Holds the worker until the test has queued the flood, so that the
// flood sits in one mailbox and one gulp takes all of it.
struct holder : tact::actor {
  // Returns once the worker is inside the holding behaviour.
  void hold() {
    std::future<void> holding = holding_.get_future();
    *this | hold_;
    holding.wait();
  }
  void let_go() { release_.set_value(); }
  tact::allocation receive(hold_msg&) {
    holding_.set_value();
    released_.wait();
    return Nodelete;
  }

 private:
  hold_msg hold_;
  std::promise<void> holding_;
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

// The most messages taking `each` or longer that one turn of `budget`
// runs: what fits, one past it, and the clock's reach (it is read at
// least once per gulp_clock_every messages). A turn whose thread is
// preempted runs fewer.
std::uint64_t turn_most(std::chrono::nanoseconds budget, std::chrono::nanoseconds each) {
  return static_cast<std::uint64_t>(budget / each) + 1 + tact::defaults::gulp_clock_every;
}

}  // namespace

TEST_CASE("a flood into one queue delays another queue of its worker by the gulp budget") {
  const auto budget = GENERATE(0us, 100us, 1000us);
  constexpr auto each = 2us;
  constexpr std::uint64_t flood = 20'000;  // 40 ms at least
  CAPTURE(budget.count());
  // One worker, two queues: the flood on queue 0, the probe on queue 1,
  // which a sweep reaches after queue 0.
  tact::actor_system system{{.workers = 1, .queues = 2, .gulp_budget = budget}};
  auto& sink = system.spawn_at<flooded>(tact::on_queue(0), each);
  auto& p = system.spawn_at<probe>(tact::on_queue(1), sink);
  auto& h = system.spawn_at<holder>(tact::on_queue(1));
  h.hold();  // the worker is inside queue 1's batch

  std::vector<flood_msg> messages(flood);
  for (flood_msg& m : messages) sink | m;
  probe_msg ping;
  p | ping;  // queue 1's mailbox: the next gulp of queue 1
  h.let_go();
  system.await_quiescence();

  CHECK(sink.received.load() == flood);
  // The first sweep after the hold gulps queue 0 (the whole flood) and
  // runs it for the budget before queue 1's turn. Each message takes at
  // least `each`, and the clock is read at least once per
  // gulp_clock_every messages: however the thread is scheduled, no more
  // than this can run first (a preempted thread runs fewer).
  const std::uint64_t before = p.flood_before.load();
  const std::uint64_t most = turn_most(budget, each);
  CAPTURE(before, most);
  if (budget == 0us) {
    CHECK(before == flood);
  } else {
    CHECK(before >= 1);
    CHECK(before <= most);
  }
  const tact::system_stats stats = system.stats();
  CHECK((stats.total.batches_given_back > 0) == (budget != 0us));
  CHECK(stats.total.gulped_messages == flood + 2);  // each message taken from a mailbox once
  CHECK(tact::test::conservation_of(system));
  sink | tact::delete_msg;
  p | tact::delete_msg;
  h | tact::delete_msg;
  system.stop();
}

namespace {

struct burst_msg : tact::message {};
struct counted_msg : tact::message {};

// Counts what it gets.
struct tally : tact::actor {
  std::atomic<std::uint64_t> received{0};
  tact::allocation receive(counted_msg&) {
    received.fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }
};

// Each run of its behaviour sends a burst to a tally on another queue and
// one burst_msg to itself, which joins the batch in hand: a batch of
// bursts, as long as the gulp budget lets it run. A run takes at least
// `each` of wall time, however fast the sends: a floor for the bound.
struct burster : tact::actor {
  static constexpr std::chrono::microseconds each{5};
  burster(tally& to, std::uint64_t bursts) : to_{to}, left_{bursts} { again_.allow_unsent(); }
  std::atomic<std::uint64_t> bursts{0};
  tact::allocation receive(burst_msg&) {
    const auto until = std::chrono::steady_clock::now() + each;
    bursts.fetch_add(1, std::memory_order_relaxed);
    for (counted_msg& m : burst_) to_ | m;
    if (--left_ > 0) *this | again_;
    while (std::chrono::steady_clock::now() < until) {
    }
    return Nodelete;
  }

 private:
  tally& to_;
  std::uint64_t left_;
  std::array<counted_msg, 1000> burst_;
  burst_msg again_;
};

// Records how many bursts had run when it got its probe.
struct burst_probe : tact::actor {
  explicit burst_probe(const burster& b) : b_{b} {}
  std::atomic<std::uint64_t> bursts_before{~std::uint64_t{0}};
  tact::allocation receive(probe_msg&) {
    bursts_before.store(b_.bursts.load(std::memory_order_relaxed));
    return Nodelete;
  }
  const burster& b_;
};

}  // namespace

TEST_CASE("a batch whose messages post bursts is cut at the gulp budget, after cheap ones too") {
  // One worker, three queues: cheap messages, then the first burst, on
  // queue 0 (one gulp takes them all), the probe on queue 1, the tally on
  // queue 2. The cheap ones would teach a clock counting messages alone
  // that 64 more fit in the budget, and 64 bursts of 1,000 sends take a
  // millisecond or more; the sends count too, so the clock is read within
  // a burst or two of them. A burst takes at least burster::each (5 µs),
  // so at most 20 fit in the 100 µs budget; a preempted thread runs fewer.
  tact::actor_system system{{.workers = 1, .queues = 3, .gulp_budget = 100us}};
  auto& t = system.spawn_at<tally>(tact::on_queue(2));
  auto& b = system.spawn_at<burster>(tact::on_queue(0), t, 200);
  auto& cheap = system.spawn_at<tally>(tact::on_queue(0));
  auto& p = system.spawn_at<burst_probe>(tact::on_queue(1), b);
  auto& h = system.spawn_at<holder>(tact::on_queue(1));
  h.hold();  // the worker is inside queue 1's batch

  std::vector<counted_msg> cheap_ones(8);
  for (counted_msg& m : cheap_ones) cheap | m;
  burst_msg start;
  b | start;
  probe_msg ping;
  p | ping;  // queue 1's mailbox: its next gulp comes after queue 0's turn
  h.let_go();
  system.await_quiescence();

  CHECK(b.bursts.load() == 200);
  CHECK(t.received.load() == 200 * 1000);
  const std::uint64_t before = p.bursts_before.load();
  CAPTURE(before);
  CHECK(before >= 1);
  CHECK(before <= 32);
  CHECK(tact::test::conservation_of(system));
  for (tact::actor* a : {static_cast<tact::actor*>(&t), static_cast<tact::actor*>(&b),
                         static_cast<tact::actor*>(&cheap), static_cast<tact::actor*>(&p),
                         static_cast<tact::actor*>(&h)})
    *a | tact::delete_msg;
  system.stop();
}

namespace {

struct stream : tact::test::sequenced {
  stream(std::uint64_t sender, std::uint64_t seq) : sequenced{sender, seq} {
    set_allocation(tact::allocation::Delete);
  }
};
struct receiver : tact::actor {
  tact::test::fifo_check fifo;
  tact::allocation receive(stream& m) {
    fifo.accept(m);
    return Nodelete;
  }
};
struct go_msg : tact::message {};
struct tick : tact::message {
  tick() { set_allocation(tact::allocation::Delete); }
};
// Sends its stream to the receiver a message at a time, one per tick it
// gets from itself: its sends to the receiver are made in many behaviours
// of one batch, the first ones appended to the batch and later ones
// through the mailbox once the batch's append budget is spent.
struct sender : tact::actor {
  sender(std::uint64_t id, receiver& to, std::uint64_t n) : id_{id}, to_{to}, n_{n} {}
  tact::allocation receive(go_msg&) {
    for (std::uint64_t i = 0; i < n_; ++i) *this | *new tick;
    return Nodelete;
  }
  tact::allocation receive(tick&) {
    to_ | *new stream{id_, sent_++};
    return Nodelete;
  }
  std::uint64_t id_;
  receiver& to_;
  std::uint64_t n_;
  std::uint64_t sent_ = 0;
};

}  // namespace

// Sends to an actor on the queue in hand join its batch (local_batch per
// gulp), later ones take the mailbox; a batch cut at the budget and taken
// up again must not let a sender's later appends overtake its earlier
// sends waiting in the mailbox.
TEST_CASE("a batch cut at the gulp budget keeps each sender's order, local appends included") {
  // 1 ns: every batch of three messages or more is cut after its second.
  const std::chrono::nanoseconds budget = GENERATE(1ns, 2000ns);
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);  // 8 on 2 cores: cut batches stolen
  CAPTURE(budget.count(), workers);
  constexpr std::uint32_t senders = 64;
  const std::uint64_t per_sender = tact::test::scaled(2'000);

  tact::actor_system system{
      tact::test::configured({.workers = workers, .local_batch = 4, .gulp_budget = budget})};
  auto& r = system.spawn<receiver>();
  std::vector<sender*> all;
  // Half share the receiver's queue, so their sends to it are appended to
  // the batch in hand; the others' come through its mailbox.
  for (std::uint64_t s = 0; s < senders; ++s)
    all.push_back(s % 2 == 0 ? &system.spawn_at<sender>(tact::next_to(r), s, r, per_sender)
                             : &system.spawn<sender>(s, r, per_sender));
  std::vector<go_msg> starts(senders);
  for (std::uint64_t s = 0; s < senders; ++s) *all[s] | starts[s];
  system.await_quiescence();
  CHECK(r.fifo.received() == senders * per_sender);
  CHECK(r.fifo.clean());
  CHECK(tact::test::conservation_of(system));
  for (sender* s : all) *s | tact::delete_msg;
  r | tact::delete_msg;
  system.stop();
}

namespace {

constexpr auto cut_budget = 100us;
constexpr auto cut_each = 2us;
constexpr std::uint64_t cut_flood = 20'000;  // 40 ms at least

// One worker, three queues, `sink` on queue 1: holds the worker in a
// holder on queue 2, floods `sink`, sends what `also()` sends, puts a
// probe behind the holder and lets the worker go. Then checks that the
// flood's turns were cut at the budget: the probe ran after a turn or two
// of it (the sweep that follows the hold may take queue 1 twice before
// queue 2), and the flood took cut_flood / turn_most turns or more, all
// but the last cut. A turn left to run to its end, once, leaves far fewer.
// `Sink`: the flooded actor's own type, whose receive the flood reaches.
template <class Sink, class Also>
void check_flood_cut(tact::actor_system& system, Sink& sink, Also also) {
  auto& p = system.spawn_at<probe>(tact::on_queue(2), sink);
  auto& h = system.spawn_at<holder>(tact::on_queue(2));
  h.hold();  // the worker is inside queue 2's batch
  std::vector<flood_msg> messages(cut_flood);
  for (flood_msg& m : messages) sink | m;
  also();
  probe_msg ping;
  p | ping;  // queue 2's mailbox: its next gulp
  h.let_go();
  system.await_quiescence();

  const std::uint64_t most = turn_most(cut_budget, cut_each);
  const std::uint64_t before = p.flood_before.load();
  const std::uint64_t given_back = system.stats().total.batches_given_back;
  CAPTURE(before, given_back, most);
  CHECK(before >= 1);
  CHECK(before <= 3 * most);
  CHECK(given_back + 1 >= cut_flood / most);
  CHECK(tact::test::conservation_of(system));
  p | tact::delete_msg;
  h | tact::delete_msg;
  system.await_quiescence();
}

struct hello_msg : tact::message {};
struct reply_msg : tact::message {};

// Sends the flooded actor one message of its own, from a batch of one:
// that send claims the flooded actor's queue, and this one's queue is
// kept meanwhile, so that the flooded actor's reply may merge.
struct caller : tact::actor {
  flooded* to = nullptr;
  std::atomic<std::uint64_t> replies{0};
  tact::allocation receive(hello_msg&) {
    *to | flood_;
    return Nodelete;
  }
  tact::allocation receive(reply_msg&) {
    replies.fetch_add(1, std::memory_order_relaxed);
    return Nodelete;
  }

 private:
  flood_msg flood_;
};

// A flooded actor that answers the first flood message it runs.
struct answering : flooded {
  answering(std::chrono::nanoseconds each, caller& c) : flooded{each}, caller_{c} {}
  tact::allocation receive(flood_msg& m) {
    if (!answered_) {
      answered_ = true;
      caller_ | reply_;
    }
    return flooded::receive(m);
  }

 private:
  caller& caller_;
  reply_msg reply_;
  bool answered_ = false;
};

struct first_msg : tact::message {
  first_msg() { set_allocation(tact::allocation::Delete); }
};
// Made by a behaviour, and gone after its first message.
struct short_lived : tact::actor {
  tact::allocation receive(first_msg&) { return Delete; }
};
// A flooded actor that makes an actor at every flood message and sends it
// its first message, which may run on the worker's stack, as the first
// message of an actor made by a behaviour does.
struct making : flooded {
  using flooded::flooded;
  tact::allocation receive(flood_msg& m) {
    system().spawn<short_lived>() | *new first_msg;
    return flooded::receive(m);
  }
};

}  // namespace

// A conversation's send into a batch that holds a backlog of its queue's
// own mail: the batch holds another queue's message then, and such a
// batch is not cut at the budget but runs what it holds (fairness.md). A
// batch too full to merge into takes no such message, so the backlog
// stays cut at the budget and other queues keep their turns.
TEST_CASE("a flood whose batch a conversation joins is still cut at the gulp budget") {
  tact::actor_system system{{.workers = 1, .queues = 3, .gulp_budget = cut_budget}};
  auto& c = system.spawn_at<caller>(tact::on_queue(0));
  auto& sink = system.spawn_at<answering>(tact::on_queue(1), cut_each, c);
  c.to = &sink;
  hello_msg hello;
  // Its batch of one claims queue 1, flood and all.
  check_flood_cut(system, sink, [&] { c | hello; });
  CHECK(sink.received.load() == cut_flood + 1);
  CHECK(c.replies.load() == 1);
  c | tact::delete_msg;
  sink | tact::delete_msg;
  system.stop();
}

// The same for a message that went on the stack to an actor of another
// queue: it has run by the time the budget is found spent, and the batch,
// which holds none of that queue's messages, is cut there.
TEST_CASE("a flood whose behaviours stack other queues' messages is still cut at the gulp budget") {
  tact::actor_system system{{.workers = 1, .queues = 3, .gulp_budget = cut_budget}};
  auto& sink = system.spawn_at<making>(tact::on_queue(1), cut_each);
  check_flood_cut(system, sink, [] {});
  CHECK(sink.received.load() == cut_flood);
  const tact::system_stats stats = system.stats();
  CHECK(stats.total.actors_created == cut_flood + 3);
  CHECK(stats.total.actors_finished == cut_flood + 2);  // the probe and the holder too
  sink | tact::delete_msg;
  system.stop();
}
