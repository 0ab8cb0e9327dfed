#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <tact/diagnostic.hpp>
#include <tact/stats.hpp>

#include "program.hpp"

// The sequential reference: what the engine promises for one program,
// computed one operation at a time with no executor at all. The test tells
// it each operation as it makes it (and gets back what must follow), and
// the actors under test tell it what they receive and commit as they run;
// it checks each report against its expectations at once, and everything
// else at the end (end_of_run). The order in which queues run is the
// schedule's choice, so the model never predicts when something runs, only
// what must run, in which order where the engine promises one, and what
// must never run: per-sender order to a classic actor or to a serialized
// transactional one; exactly-once delivery to a live actor; nothing staged
// by a handler that threw; a handler sees the state of every commit before
// it.
//
// A mismatch prints the schedule's seed, the operation and what differed,
// then aborts (a crash, for the fuzzer).
namespace tact_fuzz {

// Senders, besides the actors (0 .. max_actors - 1).
inline constexpr int from_test = static_cast<int>(max_actors);
inline constexpr int from_timer = from_test + 1;
inline constexpr std::size_t senders = max_actors + 2;
// The actor and sender named by what a handler that threw staged: the
// model fails if it ever hears of them.
inline constexpr int from_nowhere = -1;

// A transactional actor's state: what its behaviour captures.
struct tally {
  std::int64_t sum = 0;
  std::uint32_t count = 0;
  bool operator==(const tally&) const = default;
};

// What a classic actor receives.
enum class item { note, relay, boom, question };

// How an ask must end, and the virtual clock after it (time since start).
struct ask_expectation {
  enum outcome { reply, failed, no_reply, timeout } outcome;
  std::chrono::nanoseconds clock;
  std::optional<int> value{};  // a classic reply's value
};

class model {
 public:
  // `overtaking`: same-queue sends join the batch in progress
  // (system_config::local_batch), so a probe's send to a probe on its own
  // queue may run before what other senders queued earlier: a pill, say.
  model(std::uint64_t seed, bool overtaking) : seed_{seed}, overtaking_{overtaking} {}

  // ---- failures ----
  void at(std::size_t index, const operation& op);  // the operation being run
  void at_end() { where_ = "the end of the run"; }
  [[noreturn]] void fail(const std::string& what) const;
  void check(bool ok, const std::string& what) const {
    if (!ok) fail(what);
  }

  // ---- the program, told by the test as it runs it ----
  int spawn_classic();
  int spawn_tx(bool serialized);
  std::size_t actors() const noexcept { return kinds_.size(); }

  // A message from the test to classic actor `to`: its sequence number.
  std::uint32_t send(int to, item what, answer how = answer::now);
  // Tells classic actor `via` to send `to` a note: the relay's sequence
  // number (from the test to via) and the note's (from via to to).
  std::pair<std::uint32_t, std::uint32_t> relay(int via, int to);
  // A note the test made: its index in the table of notes.
  std::size_t new_note();
  void pill(int to);  // finished_msg or delete_msg
  bool pilled(int actor) const { return classic_.at(actor).pilled; }

  std::uint32_t tx_add(int to, std::int64_t value);  // its sequence number
  std::uint32_t tx_pass(int via, int to, std::int64_t value);
  void tx_boom() { ++rollbacks_expected_; }
  void tx_unmatched() { ++unmatched_expected_; }
  void tx_to_nobody() { ++dropped_expected_; }
  void tx_release(int actor) { tx_.at(actor).held = false; }
  bool held(int actor) const { return tx_.at(actor).held; }
  const tally& expected_tally(int actor) const { return tx_.at(actor).expected; }

  ask_expectation ask_classic(int to, std::uint32_t seq, answer how,
                              std::chrono::nanoseconds delay, std::chrono::nanoseconds timeout);
  ask_expectation ask_tx(int to, answer how, std::chrono::nanoseconds delay,
                         std::chrono::nanoseconds timeout);
  // The tally the last committed get of `actor` saw: what a reply carries.
  std::optional<tally> last_get(int actor) const { return tx_.at(actor).last_get; }

  // Timers: each returns the timer's index. A classic timer's note has
  // sequence number = that index, from from_timer.
  std::size_t start_classic_timer(int to, std::size_t note, std::chrono::nanoseconds delay);
  std::size_t start_tx_timer(int to, std::int64_t value, std::chrono::nanoseconds delay);
  std::size_t timers() const noexcept { return timers_.size(); }
  // A send_after to a classic actor that has finished: refused, a dead letter.
  void timer_refused() { ++dead_letters_; }
  // What cancel() must return, and the timer cancelled in the model if so.
  bool cancel(std::size_t timer);
  void advance(std::chrono::nanoseconds by) { advance_to(clock_ + by); }
  std::chrono::nanoseconds clock() const noexcept { return clock_; }
  std::size_t pending_timers() const;

  // ---- what the actors under test report as they run ----
  void received(int actor, int sender, std::uint32_t seq, item what);
  void note_received(std::size_t note);
  void note_destroyed(std::size_t note);
  // A relay was received: the note it sends is registered; its index.
  std::size_t relayed(int via, int to, std::uint32_t note_seq);
  void committed_add(int actor, int sender, std::uint32_t seq, std::int64_t value,
                     const tally& seen);
  void committed_pass(int actor, int to, std::uint32_t seq, std::int64_t value);
  void committed_get(int actor, const tally& seen);
  void committed_ghost();  // a handler that threw committed something
  void rolled_back() { ++rollbacks_seen_; }
  void diagnosed(tact::diagnostic_kind kind) { ++diagnostics_[kind]; }
  // Copies of behaviours alive (see tally.hpp).
  long& closures() noexcept { return closures_; }

  // ---- at the end: the system has stopped ----
  void end_of_run(const tact::worker_stats& total);
  // The system and its actors are gone.
  void after_teardown();

 private:
  struct expected_message {
    std::uint32_t seq;
    item what;
    answer how = answer::now;  // a question's
    int to = -1;               // a relay's target
    std::uint32_t note_seq = 0;
    bool maybe = false;  // sent after the pill: received, or a dead letter
  };
  struct classic_actor {
    bool pilled = false;  // a pill was posted: later messages are dead letters
    std::array<std::uint32_t, senders> next_seq{};
    std::array<std::deque<expected_message>, senders> expected{};  // per sender, in order
  };
  struct tx_actor {
    bool serialized = false;
    bool held = true;
    tally expected;   // every add sent, passed or fired and not cancelled
    tally committed;  // every add committed so far
    std::array<std::uint32_t, senders> next_seq{};
    std::multiset<std::tuple<int, std::uint32_t, std::int64_t>> adds;  // (sender, seq, value) to commit
    std::array<std::deque<std::uint32_t>, senders> in_order{};  // serialized: per sender
    std::multiset<std::tuple<int, std::uint32_t, std::int64_t>> passes;  // (to, seq, value) to commit
    std::optional<tally> last_get;
  };
  struct note_fate {
    int received = 0;
    int destroyed = 0;
  };
  struct timer {
    enum kind { note, add, wake, customer } kind;
    std::chrono::nanoseconds due;
    int target = -1;
    std::int64_t value = 0;  // add
    std::size_t note_id = 0;  // a note timer's, in notes_
    enum state { pending, fired, cancelled } state = pending;
  };

  std::size_t start(timer t);
  void advance_to(std::chrono::nanoseconds to);
  void fire(std::size_t index);
  void expect_add(int to, int sender, std::uint32_t seq, std::int64_t value);
  std::string name(int actor) const;

  const std::uint64_t seed_;
  const bool overtaking_;
  std::string where_ = "the start of the run";
  std::vector<char> kinds_;  // per actor: 'c' classic, 't' transactional
  std::map<int, classic_actor> classic_;
  std::map<int, tx_actor> tx_;
  std::vector<note_fate> notes_;
  std::vector<timer> timers_;  // in start order, which breaks ties of due times
  std::chrono::nanoseconds clock_{0};

  // What the totals must come to.
  std::uint64_t classic_spawned_ = 0;
  std::uint64_t pills_ = 0;
  std::uint64_t dead_letters_ = 0;
  std::uint64_t exceptions_expected_ = 0;  // classic behaviours that threw
  std::uint64_t rollbacks_expected_ = 0;
  std::uint64_t rollbacks_seen_ = 0;
  std::uint64_t unmatched_expected_ = 0;
  std::uint64_t dropped_expected_ = 0;
  std::uint64_t gets_expected_ = 0;
  std::uint64_t customer_commits_expected_ = 0;
  std::uint64_t adds_seen_ = 0;
  std::uint64_t passes_seen_ = 0;
  std::uint64_t gets_seen_ = 0;
  std::map<tact::diagnostic_kind, std::uint64_t> diagnostics_;
  long closures_ = 0;
};

}  // namespace tact_fuzz
