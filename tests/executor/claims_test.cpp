#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// Claims (docs/design.md, "Claims"): a behaviour's send to a queue nobody
// processes lets its worker run that queue next itself. Deterministic
// cases run on one worker with several queues, where every claim that the
// rules allow happens; the rest check, at 2 and 8 workers, that claims
// keep what every send keeps: each message once, each sender's in order,
// one behaviour of an actor at a time, and queues that stay with their
// worker when stealing is off.
namespace {

using namespace std::chrono_literals;
using tact::test::letters_from_threads;
using tact::test::sequenced;

struct ball : tact::message {
  std::uint64_t left = 0;
};

// Two players pass one ball back and forth until it has no hops left.
struct player : tact::actor {
  player* other = nullptr;
  std::uint64_t caught = 0;
  std::set<std::thread::id> threads;  // where its behaviours ran

  tact::allocation receive(ball& b) {
    ++caught;
    threads.insert(std::this_thread::get_id());
    if (b.left == 0) return Nodelete;
    --b.left;
    *other | b;
    return Nodelete;
  }
};

// Checks per-sender FIFO, and that it never runs two behaviours at once.
struct checker : tact::actor {
  std::atomic<bool> in_receive{false};
  tact::test::fifo_check fifo;
  std::uint64_t overlaps = 0;

  tact::allocation receive(sequenced& m) {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
    fifo.accept(m);
    in_receive.store(false, std::memory_order_release);
    return Nodelete;
  }
};

struct go : tact::message {};

// Built in place: a copy of a message destroyed unsent is reported.
std::vector<sequenced> numbered(std::uint64_t sender, std::uint64_t count) {
  std::vector<sequenced> row;
  row.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) row.emplace_back(sender, i);
  return row;
}


// On `go`, sends its whole row to its target in one behaviour: the first
// send may claim the target's queue, the next ones join the claimed
// batch, and a row longer than the same-queue budget hands it back.
struct flooder : tact::actor {
  flooder(std::uint64_t id, std::uint64_t count, checker& to) : row{numbered(id, count)}, target{&to} {}
  std::vector<sequenced> row;
  checker* target;
  tact::allocation receive(go&) {
    for (sequenced& m : row) *target | m;
    return Nodelete;
  }
};

// Sends its row one message per behaviour, re-sending itself `go`: each
// send comes from a batch's last envelope, so each may claim.
struct trickler : tact::actor {
  trickler(std::uint64_t id, std::uint64_t count, checker& to) : row{numbered(id, count)}, target{&to} {}
  std::vector<sequenced> row;
  checker* target;
  std::uint64_t sent = 0;
  go again;
  tact::allocation receive(go&) {
    *target | row[sent++];
    if (sent < row.size()) *this | again;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a conversation between two queues of one worker claims them, then runs as one batch") {
  // One worker, two queues: the first hops go to a queue nobody
  // processes, from the last envelope of a batch, and are ours: claimed.
  // Once both queues are kept, each hop joins the batch in hand (merged,
  // see docs/design.md, "Kept queues"): a local send, without a claim.
  tact::actor_system system{{.workers = 1, .queues = 2}};
  auto& a = system.spawn_at<player>(tact::on_queue(0));
  auto& b = system.spawn_at<player>(tact::on_queue(1));
  a.other = &b;
  b.other = &a;
  constexpr std::uint64_t hops = 1000;
  ball x;
  x.left = hops;
  a | x;  // from main: a plain post
  system.await_quiescence();
  CHECK(a.caught + b.caught == hops + 1);
  const tact::worker_stats s = system.stats().total;
  CHECK(s.messages_sent == hops + 1);
  // Each turn (one gulp budget) claims the two queues again; 1,000 hops
  // take a few turns at most, however slow the machine.
  CHECK(s.claims >= 1);
  CHECK(s.claims < hops / 10);
  CHECK(s.local_sends >= hops * 9 / 10);
  CHECK(s.gulps < hops / 10);
  CHECK(tact::test::conservation_of(system));
  a | tact::delete_msg;
  b | tact::delete_msg;
  system.stop();
}

namespace {

struct step : tact::message {
  std::uint64_t left = 0;
};

// Runs `steps` messages in one batch (each appends the next to it), and
// the last sends the ball on.
struct stepper_actor : tact::actor {
  player* to = nullptr;
  ball out;
  std::vector<step> steps;
  explicit stepper_actor(std::size_t n) : steps(n) {
    for (step& s : steps) s.allow_unsent();
  }
  tact::allocation receive(step& s) {
    if (s.left == 0) {
      *to | out;
      return Nodelete;
    }
    step& next = steps[s.left - 1];
    next.left = s.left - 1;
    *this | next;
    return Nodelete;
  }
};

std::uint64_t claims_after_batch_of(std::size_t envelopes) {
  tact::actor_system system{{.workers = 1, .queues = 2}};
  auto& s = system.spawn_at<stepper_actor>(tact::on_queue(0), envelopes);
  auto& p = system.spawn_at<player>(tact::on_queue(1));
  s.to = &p;
  s.steps[envelopes - 1].left = envelopes - 1;
  s | s.steps[envelopes - 1];
  system.await_quiescence();
  CHECK(p.caught == 1);
  const std::uint64_t claims = system.stats().total.claims;
  s | tact::delete_msg;
  p | tact::delete_msg;
  system.stop();
  return claims;
}

}  // namespace

TEST_CASE("only a short batch claims: a long one is a busy queue's") {
  // One worker, two queues: the last envelope of the batch sends to the
  // other queue, which nobody processes.
  CHECK(claims_after_batch_of(tact::defaults::claim_batch_most) == 1);
  CHECK(claims_after_batch_of(tact::defaults::claim_batch_most + 1) == 0);
}

TEST_CASE("a flood into a claimed queue goes back to its owner, whole and in order") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  INFO(workers << " workers");
  const std::uint64_t count = tact::test::scaled(20'000);
  // Two queues per worker, so that the flooder and its target have queues
  // of their own even at one worker.
  tact::actor_system system{{.workers = workers, .queues = 2 * workers}};
  checker target;
  flooder f{0, count, target};
  go start;
  f | start;
  system.await_quiescence();
  CHECK(target.fifo.received() == count);
  CHECK(target.fifo.clean());
  CHECK(target.overlaps == 0);
  CHECK(tact::test::conservation_of(system));
  if (workers == 1) CHECK(system.stats().total.claims == 1);
  target | tact::finished_msg;
  f | tact::finished_msg;
  system.stop();
}

TEST_CASE("a queue a flood went back from is not claimed again by that worker") {
  // One worker, two queues: both bursts come from the last envelope of a
  // batch, to a queue of the worker's own that nobody processes.
  const std::uint64_t count = tact::test::scaled(1'000) + 100;
  tact::actor_system system{{.workers = 1, .queues = 2}};
  auto& target = system.spawn_at<checker>(tact::on_queue(1));
  auto& first = system.spawn_at<flooder>(tact::on_queue(0), 0, count, target);
  auto& second = system.spawn_at<flooder>(tact::on_queue(0), 1, count, target);
  go a;
  go b;
  first | a;
  system.await_quiescence();
  CHECK(system.stats().total.claims == 1);
  second | b;
  system.await_quiescence();
  CHECK(system.stats().total.claims == 1);
  CHECK(target.fifo.received() == 2 * count);
  CHECK(target.fifo.clean());
  target | tact::delete_msg;
  first | tact::delete_msg;
  second | tact::delete_msg;
  system.stop();
}

TEST_CASE("claims keep each sender's order while threads send to the same actor") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  INFO(workers << " workers");
  constexpr std::uint64_t actor_senders = 6;
  constexpr std::uint64_t thread_senders = 2;
  const std::uint64_t per_sender = tact::test::scaled(10'000);
  tact::actor_system system{{.workers = workers, .queues = 4 * workers}};
  checker target;
  std::vector<std::unique_ptr<trickler>> trickle;
  std::vector<std::unique_ptr<flooder>> flood;
  for (std::uint64_t s = 0; s < actor_senders; ++s) {
    if (s % 2 == 0)
      trickle.push_back(std::make_unique<trickler>(s, per_sender, target));
    else
      flood.push_back(std::make_unique<flooder>(s, per_sender, target));
  }
  std::vector<go> starts(flood.size());
  for (std::size_t i = 0; i < flood.size(); ++i) *flood[i] | starts[i];
  for (auto& t : trickle) *t | t->again;
  std::vector<std::vector<sequenced>> direct;
  for (std::uint64_t t = 0; t < thread_senders; ++t)
    direct.push_back(numbered(actor_senders + t, per_sender));
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < thread_senders; ++t)
    threads.emplace_back([&, t] {
      for (sequenced& m : direct[t]) target | m;
    });
  for (auto& t : threads) t.join();
  system.await_quiescence();
  CHECK(target.fifo.received() == (actor_senders + thread_senders) * per_sender);
  CHECK(target.fifo.clean());
  CHECK(target.overlaps == 0);
  CHECK(tact::test::conservation_of(system));
  target | tact::finished_msg;
  for (auto& t : trickle) *t | tact::finished_msg;
  for (auto& f : flood) *f | tact::finished_msg;
  system.stop();
}

namespace {

// A player that also takes numbered mail from threads, checking its order
// and that it never runs two behaviours at once.
struct rally_player : tact::actor {
  rally_player* other = nullptr;
  std::atomic<std::uint64_t> caught{0};
  std::atomic<bool> in_receive{false};
  tact::test::fifo_check fifo;
  std::uint64_t overlaps = 0;
  // If set, letters still to come to either player: the rally ends once
  // none is left (or its hops run out).
  std::atomic<int>* letters_due = nullptr;

  tact::allocation receive(ball& b) {
    enter();
    caught.fetch_add(1, std::memory_order_relaxed);
    const bool letters_in = letters_due != nullptr && letters_due->load() == 0;
    if (b.left != 0 && !letters_in) {
      --b.left;
      *other | b;
    }
    leave();
    return Nodelete;
  }
  tact::allocation receive(sequenced& m) {
    enter();
    fifo.accept(m);
    if (letters_due != nullptr) letters_due->fetch_sub(1);
    leave();
    return Nodelete;
  }

 private:
  void enter() {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
  }
  void leave() { in_receive.store(false, std::memory_order_release); }
};

}  // namespace

TEST_CASE("mail from a thread to a kept queue is delivered while the conversation goes on") {
  // One worker, three queues. The ball starts at s, on queue 2, which
  // claims queue 0 for a and is then kept, as a and b rally between
  // queues 0 and 1, hop after hop, in one run of claims. Letters from this
  // thread go to d, beside s on the kept queue 2 that the rally never
  // comes back to, and to a. The rally goes on until both letters are in:
  // if the worker kept queue 2 for as long as the conversation lasts,
  // d's letter would wait until the rally ran out of hops.
  tact::actor_system system{{.workers = 1, .queues = 3}};
  auto& a = system.spawn_at<rally_player>(tact::on_queue(0));
  auto& b = system.spawn_at<rally_player>(tact::on_queue(1));
  auto& s = system.spawn_at<rally_player>(tact::on_queue(2));
  auto& d = system.spawn_at<rally_player>(tact::on_queue(2));
  std::atomic<int> letters_due{2};
  a.other = &b;
  b.other = &a;
  s.other = &a;
  for (rally_player* p : {&a, &b, &s, &d}) p->letters_due = &letters_due;
  const std::uint64_t hops = 50'000'000;  // about a second; the letters come within microseconds
  ball x;
  x.left = hops;
  s | x;
  // Once the rally is under way (it cannot end before the letters come),
  // a letter to each of d and a.
  while (a.caught.load(std::memory_order_relaxed) < 1000) std::this_thread::yield();
  sequenced to_d{0, 0};
  sequenced to_a{1, 0};
  d | to_d;
  a | to_a;
  system.await_quiescence();
  CHECK(d.fifo.received() == 1);
  CHECK(a.fifo.received() == 1);
  CHECK(s.caught + a.caught + b.caught < hops);  // ended by the letters, not out of hops
  CHECK(system.stats().total.local_sends > 1000);  // the queues were kept
  CHECK(a.overlaps + b.overlaps + s.overlaps + d.overlaps == 0);
  CHECK(tact::test::conservation_of(system));
  for (rally_player* p : {&a, &b, &s, &d}) *p | tact::delete_msg;
  system.stop();
}

TEST_CASE("rallies between kept queues keep each sender's order under threads' mail") {
  // Pairs of actors rally while threads send numbered letters to them:
  // workers keep the rallies' queues between hops, and the letters take
  // the mailboxes of queues being kept, taken in ahead of the next hop.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  INFO(workers << " workers");
  constexpr std::uint64_t pairs = 4;
  constexpr std::uint64_t thread_senders = 2;
  const std::uint64_t hops = tact::test::scaled(50'000);
  const std::uint64_t per_sender = tact::test::scaled(5'000);
  tact::actor_system system{{.workers = workers, .queues = 4 * workers}};
  std::vector<std::unique_ptr<rally_player>> players;
  for (std::uint64_t i = 0; i < 2 * pairs; ++i) players.push_back(std::make_unique<rally_player>());
  std::vector<ball> balls(pairs);
  for (std::uint64_t p = 0; p < pairs; ++p) {
    players[2 * p]->other = players[2 * p + 1].get();
    players[2 * p + 1]->other = players[2 * p].get();
    balls[p].left = hops;
    *players[2 * p] | balls[p];
  }
  std::vector<rally_player*> to;
  for (auto& p : players) to.push_back(p.get());
  const auto letters = letters_from_threads(to, thread_senders, per_sender);
  system.await_quiescence();
  std::uint64_t caught = 0;
  std::uint64_t letters_received = 0;
  for (auto& p : players) {
    caught += p->caught;
    letters_received += p->fifo.received();
    CHECK(p->fifo.clean());
    CHECK(p->overlaps == 0);
  }
  CHECK(caught == pairs * (hops + 1));
  CHECK(letters_received == thread_senders * per_sender);
  CHECK(tact::test::conservation_of(system));
  for (auto& p : players) *p | tact::finished_msg;
  system.stop();
}

namespace {

struct tick : tact::message {};

// Rallies a ball with a `checker`-like partner and, on each catch, sends
// it two numbered letters from two envelopes of one batch: the first from
// the middle of the batch, which takes the partner's mailbox (only a
// batch's last envelope may hop), the second and the ball from its last
// envelope, which hops into the partner's queue, kept by this worker.
struct double_sender;
struct letter_player : tact::actor {
  double_sender* other = nullptr;
  tact::test::fifo_check fifo;
  std::uint64_t caught = 0;
  inline tact::allocation receive(ball& b);
  tact::allocation receive(sequenced& m) {
    fifo.accept(m);
    return Nodelete;
  }
};

struct double_sender : tact::actor {
  letter_player* other = nullptr;
  std::vector<sequenced> letters;
  std::size_t sent = 0;
  ball* held = nullptr;
  tick first, second;
  explicit double_sender(std::uint64_t rounds) : letters{numbered(0, 2 * rounds)} {}
  tact::allocation receive(ball& b) {
    held = &b;
    *this | first;  // both into this batch: `first` runs with `second` behind it
    *this | second;
    return Nodelete;
  }
  tact::allocation receive(tick& t) {
    *other | letters[sent++];
    if (&t == &second) {
      --held->left;
      *other | *held;
    }
    return Nodelete;
  }
};

tact::allocation letter_player::receive(ball& b) {
  ++caught;
  if (b.left != 0) *other | b;
  return Nodelete;
}

}  // namespace

TEST_CASE("a hop into a kept queue comes after the mail its batch left in that queue's mailbox") {
  // One worker, two queues: the rally keeps both. Each round the letter
  // sent from the middle of a batch waits in the kept queue's mailbox
  // when the batch's last envelope sends the next letter: that one may
  // go straight into the kept queue's batch only behind the first.
  tact::actor_system system{{.workers = 1, .queues = 2}};
  constexpr std::uint64_t rounds = 1000;
  auto& a = system.spawn_at<double_sender>(tact::on_queue(0), rounds);
  auto& b = system.spawn_at<letter_player>(tact::on_queue(1));
  a.other = &b;
  b.other = &a;
  ball x;
  x.left = rounds;
  b | x;
  system.await_quiescence();
  CHECK(b.fifo.received() == 2 * rounds);
  CHECK(b.fifo.clean());
  CHECK(b.caught == rounds + 1);
  CHECK(system.stats().total.local_sends > rounds);  // the hops went into kept queues
  CHECK(tact::test::conservation_of(system));
  a | tact::delete_msg;
  b | tact::delete_msg;
  system.stop();
}

namespace {

// Rallies the ball with its partner; the one that catches it with no hops
// left sends its whole row to `target`, in that one behaviour.
struct rally_flooder : tact::actor {
  rally_flooder* other = nullptr;
  checker* target = nullptr;
  std::vector<sequenced> row;
  tact::allocation receive(ball& b) {
    if (b.left != 0) {
      --b.left;
      *other | b;
    } else {
      for (sequenced& m : row) *target | m;
    }
    return Nodelete;
  }
};

// One worker, two queues: a rally of `hops` (even, so that the first
// player catches the last ball) keeps both, then a row of `flood` goes to
// a checker beside the second player; returns the system's local sends.
// No same-queue appends, so that whichever queue's batch is in hand a
// local send is a merge or a claim's join; and no gulp budget, so that no
// turn is cut short wherever the OS preempts the worker, and the rally
// makes the same local sends in every run.
std::uint64_t local_sends_of_rally_then(std::uint64_t hops, std::uint64_t flood) {
  tact::actor_system system{
      {.workers = 1, .queues = 2, .local_batch = 0, .gulp_budget = std::chrono::nanoseconds{0}}};
  auto& a = system.spawn_at<rally_flooder>(tact::on_queue(0));
  auto& b = system.spawn_at<rally_flooder>(tact::on_queue(1));
  auto& target = system.spawn_at<checker>(tact::on_queue(1));
  a.other = &b;
  b.other = &a;
  a.target = &target;
  b.target = &target;
  a.row = numbered(0, flood);
  ball x;
  x.left = hops;
  a | x;
  system.await_quiescence();
  CHECK(target.fifo.received() == flood);
  CHECK(target.fifo.clean());
  CHECK(target.overlaps == 0);
  CHECK(tact::test::conservation_of(system));
  const std::uint64_t local = system.stats().total.local_sends;
  a | tact::delete_msg;
  b | tact::delete_msg;
  target | tact::delete_msg;
  system.stop();
  return local;
}

}  // namespace

TEST_CASE("a flood into a kept queue joins its worker's batches only up to a bound") {
  // Every send of the row could join a batch this worker holds: merged
  // into the batch in hand (which, having merged, is never cut short), and
  // then, once merging is off, into the kept queue's own batch as a hop
  // and its joins. Merging goes off once a reading of the batch's size
  // finds defaults::claim_joins envelopes, and the readings come before
  // merges alone could carry it past defaults::merge_reading_reach; the
  // hop's joins stop at claim_joins.
  // The rest of the row takes the mailbox, so that a producer and its
  // consumer can run on two workers. The row's local sends are told apart
  // from the rally's by running the rally alone too.
  constexpr std::uint64_t hops = 100;
  constexpr std::uint64_t flood = 10 * tact::defaults::claim_joins;
  const std::uint64_t rally = local_sends_of_rally_then(hops, 0);
  const std::uint64_t both = local_sends_of_rally_then(hops, flood);
  REQUIRE(both >= rally);
  const std::uint64_t joined = both - rally;
  INFO(joined << " of the row's " << flood << " sends joined a batch");
  CHECK(joined >= 1);
  CHECK(joined <= tact::defaults::merge_reading_reach + tact::defaults::claim_joins);
  CHECK(joined < flood);
}

TEST_CASE("with stealing off, a worker never claims another worker's queue") {
  // Placement promises that queues stay with their worker when stealing
  // is off: the ball hops between the two workers every time.
  tact::actor_system system{{.workers = 2, .queues = 2, .steal = tact::steal_policy::none}};
  auto& a = system.spawn_at<player>(tact::on_worker(0));
  auto& b = system.spawn_at<player>(tact::on_worker(1));
  a.other = &b;
  b.other = &a;
  ball x;
  x.left = tact::test::scaled(2'000);
  a | x;
  system.await_quiescence();
  REQUIRE(a.threads.size() == 1);
  REQUIRE(b.threads.size() == 1);
  CHECK(*a.threads.begin() != *b.threads.begin());
  CHECK(system.stats().total.claims == 0);
  a | tact::delete_msg;
  b | tact::delete_msg;
  system.stop();
}

namespace {

struct note : tact::message {};
struct noted : tact::request<bool> {};

struct recorder : tact::actor {
  bool got_note = false;
  tact::allocation receive(note&) {
    got_note = true;
    return Nodelete;
  }
  tact::allocation receive(noted& q) {
    q.reply(got_note);
    return Nodelete;
  }
};

// Sends a note, then asks whether it arrived: the note claims the
// recorder's queue, the question joins the claimed batch, and the asker
// is suspended with the claim pending.
struct asker : tact::actor {
  recorder* to = nullptr;
  note n;
  tact::ask_result<bool> answer{tact::ask_error::no_reply};
  tact::allocation receive(go&) {
    *to | n;
    answer = tact::ask(*to, noted{}, 60s);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a behaviour that waits with a claim pending: its worker runs the claim meanwhile") {
  // One worker: nobody else could run the recorder.
  tact::actor_system system{{.workers = 1, .queues = 2}};
  auto& r = system.spawn_at<recorder>(tact::on_queue(1));
  auto& a = system.spawn_at<asker>(tact::on_queue(0));
  a.to = &r;
  go start;
  a | start;
  system.await_quiescence();
  REQUIRE(a.answer.has_value());
  CHECK(*a.answer);
  CHECK(system.stats().total.claims >= 1);
  a | tact::delete_msg;
  r | tact::delete_msg;
  system.stop();
}

namespace {

// The other end of a rally that also takes a note.
struct rally_recorder : tact::actor {
  tact::actor* other = nullptr;  // the rally_asker
  bool got_note = false;
  std::uint64_t caught = 0;
  tact::allocation receive(ball& b);
  tact::allocation receive(note&) {
    got_note = true;
    return Nodelete;
  }
};

struct helper : tact::actor {
  tact::allocation receive(noted& q) {
    q.reply(true);
    return Nodelete;
  }
};

// Rallies with a rally_recorder; at the rally's end it sends the recorder
// a note, which hops into the recorder's queue (kept by then), and waits
// for an answer from a helper on its own queue: the question joins its
// own batch, so the behaviour waits with the hop still pending.
struct rally_asker : tact::actor {
  rally_recorder* to = nullptr;
  helper* help = nullptr;
  note n;
  tact::ask_result<bool> answer{tact::ask_error::no_reply};
  std::uint64_t caught = 0;
  tact::allocation receive(ball& b) {
    ++caught;
    if (b.left == 0) {
      *to | n;
      answer = tact::ask(*help, noted{}, 60s);
      return Nodelete;
    }
    --b.left;
    *to | b;
    return Nodelete;
  }
};

tact::allocation rally_recorder::receive(ball& b) {
  ++caught;
  *static_cast<rally_asker*>(other) | b;  // the asker counts the hops
  return Nodelete;
}

}  // namespace

TEST_CASE("a behaviour that waits right after a hop into a kept queue: the hop runs meanwhile") {
  // One worker, two queues: the rally keeps the recorder's queue, the
  // note hops into it, and the asker waits before its batch hands over.
  tact::actor_system system{{.workers = 1, .queues = 2}};
  auto& a = system.spawn_at<rally_asker>(tact::on_queue(0));
  auto& h = system.spawn_at<helper>(tact::on_queue(0));
  auto& r = system.spawn_at<rally_recorder>(tact::on_queue(1));
  a.to = &r;
  a.help = &h;
  r.other = &a;
  constexpr std::uint64_t hops = 1000;
  ball x;
  x.left = hops;
  a | x;
  system.await_quiescence();
  REQUIRE(a.answer.has_value());
  CHECK(*a.answer);
  CHECK(r.got_note);
  CHECK(a.caught == hops + 1);
  CHECK(r.caught == hops);
  CHECK(system.stats().total.suspensions == 1);
  CHECK(system.stats().total.local_sends > hops / 2);  // the rally's hops went into kept queues
  CHECK(tact::test::conservation_of(system));
  a | tact::delete_msg;
  h | tact::delete_msg;
  r | tact::delete_msg;
  system.stop();
}

namespace {

// The far end of a rally whose every hop joins the batch in hand (its
// queue and the server's are kept, so the ball merges). Every
// `ask_every`-th catch it sends itself a ticket, which merges too, and
// then asks a helper and waits: its batch waits with the ticket in it.
// Threads send it numbered letters meanwhile. Its behaviours, the wait
// included, must never overlap, and the ticket must come after the wait.
struct server;

struct waiting_receiver : tact::actor {
  server* srv = nullptr;
  helper* help = nullptr;
  std::uint64_t ask_every = 1;
  std::atomic<bool> in_receive{false};
  std::uint64_t overlaps = 0;
  std::uint64_t caught = 0;
  std::uint64_t waits = 0;
  std::uint64_t answered = 0;
  std::uint64_t tickets = 0;
  std::uint64_t tickets_early = 0;  // a ticket run before its wait was over
  bool waiting_done = true;
  std::atomic<bool> asked{false};  // it has asked at least once
  step ticket;
  tact::test::fifo_check fifo;

  void enter() {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
  }
  void leave() { in_receive.store(false, std::memory_order_release); }

  tact::allocation receive(ball& b) {
    enter();
    ++caught;
    if (caught % ask_every == 0) {
      waiting_done = false;
      *this | ticket;
      ++waits;
      asked.store(true, std::memory_order_release);
      const tact::ask_result<bool> answer = tact::ask(*help, noted{}, 60s);
      if (answer.has_value() && *answer) ++answered;
      waiting_done = true;
    }
    leave();
    send_back(b);
    return Nodelete;
  }
  void send_back(ball& b);
  tact::allocation receive(step&) {
    enter();
    ++tickets;
    if (!waiting_done) ++tickets_early;
    leave();
    return Nodelete;
  }
  tact::allocation receive(sequenced& m) {
    enter();
    fifo.accept(m);
    leave();
    return Nodelete;
  }
};

// Serves the ball back until it has no hops left.
struct server : tact::actor {
  waiting_receiver* to = nullptr;
  tact::allocation receive(ball& b) {
    if (b.left == 0) return Nodelete;
    --b.left;
    *to | b;
    return Nodelete;
  }
};

void waiting_receiver::send_back(ball& b) { *srv | b; }

}  // namespace

TEST_CASE("a behaviour that waits in a batch holding merged messages keeps their queues held") {
  // The receiver waits (an ask) in a batch that holds a ticket of its own
  // and the rally's hops. The receiver gets the first ball, from main: its
  // hop claims the server's queue, whose batch the rally then runs in, so
  // the receiver's messages, the ticket included, are merged into another
  // queue's batch. That queue stays with the waiting batch (docs/design.md,
  // "Kept queues"), so letters that threads send to the receiver meanwhile
  // wait for the behaviour, in order, and the ticket runs after it. The
  // helper's queue is a third one.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  INFO(workers << " workers");
  const std::uint32_t queues = std::max(3u, 2 * workers);
  tact::actor_system system{{.workers = workers, .queues = queues}};
  auto& srv = system.spawn_at<server>(tact::on_queue(0));
  auto& rcv = system.spawn_at<waiting_receiver>(tact::on_queue(1));
  auto& h = system.spawn_at<helper>(tact::on_queue(2));
  srv.to = &rcv;
  rcv.srv = &srv;
  rcv.help = &h;
  rcv.ask_every = 50;
  const std::uint64_t hops = tact::test::scaled(20'000);
  ball x;
  x.left = hops;
  rcv | x;
  const std::vector<waiting_receiver*> to{&rcv};
  const auto letters = letters_from_threads(to, 2, tact::test::scaled(5'000));
  system.await_quiescence();
  CHECK(rcv.caught == hops + 1);
  CHECK(rcv.overlaps == 0);
  CHECK(rcv.waits == rcv.caught / rcv.ask_every);
  CHECK(rcv.answered == rcv.waits);
  CHECK(rcv.tickets == rcv.waits);
  CHECK(rcv.tickets_early == 0);
  CHECK(rcv.fifo.clean());
  CHECK(rcv.fifo.received() == 2 * tact::test::scaled(5'000));
  // Each wait suspends unless the helper's answer came first: with more
  // than one worker, the helper's worker may answer before the asker
  // reaches its suspension (await_suspended then has nothing to wait
  // for). On one worker it cannot.
  const std::uint64_t suspensions = system.stats().total.suspensions;
  CHECK(suspensions <= rcv.waits);
  CHECK(suspensions > 0);
  if (workers == 1) CHECK(suspensions == rcv.waits);
  CHECK(tact::test::conservation_of(system));
  srv | tact::delete_msg;
  rcv | tact::delete_msg;
  h | tact::delete_msg;
  system.stop();
}

TEST_CASE("while a behaviour merged into another queue's batch waits, its queue stays held") {
  // One worker, deterministic. The receiver gets main's ball first; its
  // hop claims the server's queue, whose batch the rally runs in from then
  // on, the receiver's hops merged into it. At its third catch the
  // receiver sends itself a ticket (merged too) and asks a helper bound to
  // a sponsor that main runs only after it has sent the receiver letters,
  // so the worker has time to run anything of the receiver's queue it can
  // reach. Kept queues let go at that point would let it run the letters
  // in the middle of the receiver's behaviour.
  tact::actor_system system{{.workers = 1, .queues = 3}};
  tact::sponsor here{system};
  auto& srv = system.spawn_at<server>(tact::on_queue(0));
  auto& rcv = system.spawn_at<waiting_receiver>(tact::on_queue(1));
  auto& h = here.spawn<helper>();
  srv.to = &rcv;
  rcv.srv = &srv;
  rcv.help = &h;
  rcv.ask_every = 3;
  constexpr std::uint64_t hops = 4;  // the receiver waits once, at its third catch
  ball x;
  x.left = hops;
  rcv | x;
  while (!rcv.asked.load(std::memory_order_acquire)) std::this_thread::yield();
  const std::uint64_t gulps = system.stats().total.gulps;
  std::vector<sequenced> letters = numbered(7, 100);
  for (sequenced& l : letters) rcv | l;
  // The letters wake the worker, which takes them in (into the waiting
  // batch, or wrongly into a batch of their own): a gulp either way.
  while (system.stats().total.gulps == gulps) std::this_thread::yield();
  here.run_until_quiescent();  // the helper answers; the rally ends
  system.await_quiescence();
  CHECK(rcv.caught == hops + 1);
  CHECK(rcv.waits == 1);
  CHECK(rcv.answered == 1);
  CHECK(rcv.overlaps == 0);
  CHECK(rcv.tickets == 1);
  CHECK(rcv.tickets_early == 0);
  CHECK(rcv.fifo.clean());
  CHECK(rcv.fifo.received() == letters.size());
  CHECK(system.stats().total.local_sends >= 2);  // the rally merged
  CHECK(tact::test::conservation_of(system));
  srv | tact::delete_msg;
  rcv | tact::delete_msg;
  h | tact::delete_msg;
  here.run_until_quiescent();
  system.stop();
}

namespace {

// One of a ring of actors, each on a queue of its own, passing a token
// on: a conversation that hops through every queue in turn, so that the
// queues it keeps change places at each hop. Checks that it never runs
// two behaviours at once and counts what it caught.
// On every other catch it also sends itself two ticks, before the token:
// with an append budget of one per batch, the second takes the mailbox
// path from the queue in hand, which must not take it for a kept one.
struct ring_member : tact::actor {
  ring_member* next = nullptr;
  std::atomic<bool> in_receive{false};
  std::atomic<std::uint64_t> caught{0};
  std::uint64_t overlaps = 0;
  tact::test::fifo_check fifo;
  step ticks[2];
  int ticks_out = 0;
  std::uint64_t ticks_in = 0;
  std::uint64_t ticks_out_of_order = 0;
  tact::allocation receive(ball& b) {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
    const std::uint64_t catches = caught.fetch_add(1, std::memory_order_relaxed) + 1;
    in_receive.store(false, std::memory_order_release);
    // Every other catch: the tick left in the mailbox makes the next hop
    // into this queue take the mailbox in, and the one after that hops.
    if (catches % 2 == 0 && ticks_out == 0) {
      ticks_out = 2;
      *this | ticks[0];
      *this | ticks[1];
    }
    if (b.left == 0) return Nodelete;
    --b.left;
    *next | b;
    return Nodelete;
  }
  tact::allocation receive(step& t) {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
    if (&t != &ticks[ticks_in++ % 2]) ++ticks_out_of_order;
    --ticks_out;
    in_receive.store(false, std::memory_order_release);
    return Nodelete;
  }
  tact::allocation receive(sequenced& m) {
    if (in_receive.exchange(true, std::memory_order_acquire)) ++overlaps;
    fifo.accept(m);
    in_receive.store(false, std::memory_order_release);
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("tokens round rings of queues: every hop once, one behaviour at a time, letters in order") {
  // Each ring has an actor on each of `ring` queues; its token visits
  // them in turn, so a worker keeps the ring's queues and each hop swaps
  // the queue it leaves for the one it enters among them. Threads send
  // numbered letters to the members meanwhile, and each member ticks
  // itself past its append budget.
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  // A turn cut at its budget after every message or so: a batch that
  // merged hops is then cut again and again, and must run to its end
  // each time instead of being left for its queue's next gulp.
  // Both in nanoseconds: GENERATE takes the first value's type, and a
  // named constant of another duration made it a dangling reference.
  const auto budget = GENERATE(std::chrono::nanoseconds{tact::defaults::gulp_budget},
                               std::chrono::nanoseconds{1});
  INFO(workers << " workers, gulp budget " << budget.count() << " ns");
  constexpr std::uint32_t ring = 5;
  constexpr std::uint32_t rings = 2;
  constexpr std::uint64_t thread_senders = 2;
  const std::uint64_t hops = tact::test::scaled(100'000);
  const std::uint64_t per_sender = tact::test::scaled(5'000);
  const std::uint32_t queues = std::max(ring * rings, 4 * workers);
  tact::actor_system system{
      {.workers = workers, .queues = queues, .local_batch = 1, .gulp_budget = budget}};
  std::vector<ring_member*> members;
  for (std::uint32_t i = 0; i < ring * rings; ++i)
    members.push_back(&system.spawn_at<ring_member>(tact::on_queue(i % queues)));
  for (std::uint32_t r = 0; r < rings; ++r)
    for (std::uint32_t i = 0; i < ring; ++i)
      members[r * ring + i]->next = members[r * ring + (i + 1) % ring];
  std::vector<ball> tokens(rings);
  for (std::uint32_t r = 0; r < rings; ++r) {
    tokens[r].left = hops;
    *members[r * ring] | tokens[r];
  }
  const auto letters = letters_from_threads(members, thread_senders, per_sender);
  system.await_quiescence();
  std::uint64_t caught = 0;
  std::uint64_t letters_received = 0;
  for (ring_member* m : members) {
    caught += m->caught;
    letters_received += m->fifo.received();
    CHECK(m->fifo.clean());
    CHECK(m->overlaps == 0);
    CHECK(m->ticks_out_of_order == 0);
    CHECK(m->ticks_out == 0);
  }
  CHECK(caught == rings * (hops + 1));
  CHECK(letters_received == thread_senders * per_sender);
  CHECK(tact::test::conservation_of(system));
  for (ring_member* m : members) *m | tact::delete_msg;
  system.stop();
}
