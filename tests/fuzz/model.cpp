#include "model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tact_fuzz {

using tact::diagnostic_kind;

namespace {

std::string show(const tally& t) {
  return "(sum " + std::to_string(t.sum) + ", count " + std::to_string(t.count) + ")";
}

std::string sender_name(int sender) {
  if (sender == from_test) return "the test";
  if (sender == from_timer) return "a timer";
  return "actor " + std::to_string(sender);
}

}  // namespace

void model::at(std::size_t index, const operation& op) {
  where_ = "operation " + std::to_string(index) + " " + describe(op);
}

void model::fail(const std::string& what) const {
  std::fprintf(stderr, "ops_fuzz: mismatch with schedule seed %llu at %s: %s\n",
               static_cast<unsigned long long>(seed_), where_.c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string model::name(int actor) const {
  return (kinds_.at(actor) == 'c' ? "probe " : "tally ") + std::to_string(actor);
}

// ---- the program ----

int model::spawn_classic() {
  const int id = static_cast<int>(kinds_.size());
  kinds_.push_back('c');
  classic_[id];
  ++classic_spawned_;
  return id;
}

int model::spawn_tx(bool serialized) {
  const int id = static_cast<int>(kinds_.size());
  kinds_.push_back('t');
  tx_[id].serialized = serialized;
  return id;
}

std::uint32_t model::send(int to, item what, answer how) {
  classic_actor& c = classic_.at(to);
  const std::uint32_t seq = c.next_seq[from_test]++;
  if (c.pilled)
    ++dead_letters_;
  else
    c.expected[from_test].push_back({seq, what, how});
  return seq;
}

std::pair<std::uint32_t, std::uint32_t> model::relay(int via, int to) {
  classic_actor& v = classic_.at(via);
  const std::uint32_t seq = v.next_seq[from_test]++;
  const std::uint32_t note_seq = classic_.at(to).next_seq[via]++;
  if (v.pilled)
    ++dead_letters_;
  else
    v.expected[from_test].push_back({seq, item::relay, answer::now, to, note_seq});
  return {seq, note_seq};
}

std::size_t model::new_note() {
  notes_.push_back({});
  return notes_.size() - 1;
}

void model::pill(int to) {
  classic_.at(to).pilled = true;
  ++pills_;
}

void model::expect_add(int to, int sender, std::uint32_t seq, std::int64_t value) {
  tx_actor& t = tx_.at(to);
  t.adds.insert({sender, seq, value});
  // One queue, the home queue, takes a serialized actor's messages in the
  // order they were sent: by the test, committed by a sender, fired.
  if (t.serialized) t.in_order[sender].push_back(seq);
}

std::uint32_t model::tx_add(int to, std::int64_t value) {
  tx_actor& t = tx_.at(to);
  const std::uint32_t seq = t.next_seq[from_test]++;
  expect_add(to, from_test, seq, value);
  t.expected.sum += value;
  ++t.expected.count;
  return seq;
}

std::uint32_t model::tx_pass(int via, int to, std::int64_t value) {
  tx_actor& t = tx_.at(to);
  const std::uint32_t seq = t.next_seq[via]++;
  tx_.at(via).passes.insert({to, seq, value});
  t.expected.sum += value;
  ++t.expected.count;
  return seq;
}

ask_expectation model::ask_classic(int to, std::uint32_t seq, answer how,
                                   std::chrono::nanoseconds delay,
                                   std::chrono::nanoseconds timeout) {
  const int value = static_cast<int>(seq) * 2;
  // A request to a finished actor is dropped: nobody can answer it.
  if (classic_.at(to).pilled) return {ask_expectation::no_reply, clock_};
  switch (how) {
    case answer::now:
      return {ask_expectation::reply, clock_, value};
    case answer::never:
      return {ask_expectation::no_reply, clock_};
    case answer::fail:
      return {ask_expectation::failed, clock_};
    case answer::later:
      break;
  }
  // The answer comes when the probe's timer fires; the ask moves the clock
  // to it (firing whatever is due on the way) or to the deadline, whichever
  // is first (a timer due at the deadline still fires).
  const auto start = clock_;
  this->start({timer::wake, start + delay, to});
  if (delay <= timeout) {
    advance_to(start + delay);
    return {ask_expectation::reply, clock_, value};
  }
  advance_to(start + timeout);
  return {ask_expectation::timeout, clock_};
}

ask_expectation model::ask_tx(int to, answer how, std::chrono::nanoseconds delay,
                              std::chrono::nanoseconds timeout) {
  check(tx_.at(to).held, "the test asked " + name(to) + ", which it no longer holds");
  switch (how) {
    case answer::now:
      ++gets_expected_;
      ++customer_commits_expected_;
      return {ask_expectation::reply, clock_};
    case answer::never:
      ++gets_expected_;
      return {ask_expectation::no_reply, clock_};
    case answer::fail:
      ++rollbacks_expected_;
      ++customer_commits_expected_;  // the customer is told of the failure
      return {ask_expectation::failed, clock_};
    case answer::later:
      break;
  }
  ++gets_expected_;
  const auto start = clock_;
  this->start({timer::customer, start + delay, to});
  if (delay <= timeout) {
    advance_to(start + delay);
    return {ask_expectation::reply, clock_};
  }
  advance_to(start + timeout);
  return {ask_expectation::timeout, clock_};
}

// ---- time ----

std::size_t model::start(timer t) {
  timers_.push_back(t);
  return timers_.size() - 1;
}

std::size_t model::start_classic_timer(int to, std::size_t note, std::chrono::nanoseconds delay) {
  return start({timer::note, clock_ + delay, to, 0, note});
}

std::size_t model::start_tx_timer(int to, std::int64_t value, std::chrono::nanoseconds delay) {
  return start({timer::add, clock_ + delay, to, value});
}

// Fires every pending timer due by `to`, earliest first, ties in start order.
void model::advance_to(std::chrono::nanoseconds to) {
  for (;;) {
    std::size_t next = timers_.size();
    for (std::size_t i = 0; i < timers_.size(); ++i)
      if (timers_[i].state == timer::pending && timers_[i].due <= to &&
          (next == timers_.size() || timers_[i].due < timers_[next].due))
        next = i;
    if (next == timers_.size()) break;
    clock_ = std::max(clock_, timers_[next].due);
    fire(next);
  }
  clock_ = std::max(clock_, to);
}

void model::fire(std::size_t index) {
  timer& t = timers_[index];
  t.state = timer::fired;
  switch (t.kind) {
    case timer::note: {
      // Posted behind a pill, or to a finished actor: never received.
      classic_actor& c = classic_.at(t.target);
      if (!c.pilled) c.expected[from_timer].push_back({static_cast<std::uint32_t>(index), item::note});
      break;
    }
    case timer::add:
      expect_add(t.target, from_timer, static_cast<std::uint32_t>(index), t.value);
      tx_.at(t.target).expected.sum += t.value;
      ++tx_.at(t.target).expected.count;
      break;
    case timer::wake:
      break;
    case timer::customer:
      ++customer_commits_expected_;
      break;
  }
}

bool model::cancel(std::size_t index) {
  timer& t = timers_.at(index);
  if (t.state == timer::cancelled) return false;
  if (t.state == timer::pending) {
    t.state = timer::cancelled;
    return true;
  }
  // Fired: the cancel wins only if the delivery has not started, and then
  // no delivery starts.
  if (t.kind == timer::note) {
    if (notes_.at(t.note_id).destroyed > 0) return false;  // delivered, or ended undelivered
    auto& q = classic_.at(t.target).expected[from_timer];
    const auto it = std::find_if(q.begin(), q.end(), [&](const expected_message& m) {
      return m.seq == static_cast<std::uint32_t>(index);
    });
    if (it != q.end()) q.erase(it);
  } else {
    tx_actor& a = tx_.at(t.target);
    const auto it = a.adds.find({from_timer, static_cast<std::uint32_t>(index), t.value});
    if (it == a.adds.end()) return false;  // committed already
    a.adds.erase(it);
    auto& q = a.in_order[from_timer];
    q.erase(std::remove(q.begin(), q.end(), static_cast<std::uint32_t>(index)), q.end());
    a.expected.sum -= t.value;
    --a.expected.count;
  }
  t.state = timer::cancelled;
  return true;
}

std::size_t model::pending_timers() const {
  return static_cast<std::size_t>(std::count_if(
      timers_.begin(), timers_.end(), [](const timer& t) { return t.state == timer::pending; }));
}

// ---- reports ----

void model::received(int actor, int sender, std::uint32_t seq, item what) {
  static constexpr const char* items[] = {"note", "relay", "boom", "question"};
  auto& q = classic_.at(actor).expected[sender];
  const std::string got = std::string{items[static_cast<int>(what)]} + " " + std::to_string(seq) +
                          " from " + sender_name(sender);
  check(!q.empty(), name(actor) + " received " + got + ", which it should not (duplicate, "
                                  "dead letter or never sent)");
  const expected_message e = q.front();
  check(e.seq == seq && e.what == what,
        name(actor) + " received " + got + " before " + items[static_cast<int>(e.what)] + " " +
            std::to_string(e.seq) + " (per-sender order)");
  q.pop_front();
  if (what == item::boom || (what == item::question && e.how == answer::fail))
    ++exceptions_expected_;
}

std::size_t model::relayed(int via, int to, std::uint32_t note_seq) {
  classic_actor& target = classic_.at(to);
  if (!target.pilled)
    target.expected[via].push_back({note_seq, item::note});
  else if (overtaking_)
    // Behind the pill, or ahead of it in the batch in hand if the two
    // probes share a queue; in send order either way, so the notes
    // received are a prefix of those sent (see end_of_run).
    target.expected[via].push_back({note_seq, item::note, answer::now, -1, 0, true});
  else
    ++dead_letters_;  // behind the pill
  return new_note();
}

void model::note_received(std::size_t note) {
  note_fate& f = notes_.at(note);
  check(f.received == 0 && f.destroyed == 0,
        "note " + std::to_string(note) + " received twice, or after it was destroyed");
  ++f.received;
}

void model::note_destroyed(std::size_t note) {
  note_fate& f = notes_.at(note);
  check(f.destroyed == 0, "note " + std::to_string(note) + " destroyed twice");
  ++f.destroyed;
}

void model::committed_add(int actor, int sender, std::uint32_t seq, std::int64_t value,
                          const tally& seen) {
  if (actor == from_nowhere || sender == from_nowhere) committed_ghost();
  tx_actor& t = tx_.at(actor);
  const std::string what = "add " + std::to_string(value) + " (" + std::to_string(seq) + " from " +
                           sender_name(sender) + ")";
  check(seen == t.committed, name(actor) + " ran " + what + " against " + show(seen) +
                                 ", not the state its earlier commits left, " + show(t.committed));
  const auto it = t.adds.find({sender, seq, value});
  check(it != t.adds.end(), name(actor) + " committed " + what + ", which it should not "
                                          "(duplicate, cancelled or never sent)");
  t.adds.erase(it);
  if (t.serialized) {
    auto& q = t.in_order[sender];
    check(!q.empty() && q.front() == seq, name(actor) + " (serialized) committed " + what +
                                              " out of its sender's order");
    q.pop_front();
  }
  t.committed.sum += value;
  ++t.committed.count;
  ++adds_seen_;
}

void model::committed_pass(int actor, int to, std::uint32_t seq, std::int64_t value) {
  tx_actor& t = tx_.at(actor);
  const auto it = t.passes.find({to, seq, value});
  check(it != t.passes.end(), name(actor) + " committed a pass to " + name(to) +
                                  " it was never asked for, or twice");
  t.passes.erase(it);
  expect_add(to, actor, seq, value);
  ++passes_seen_;
}

void model::committed_get(int actor, const tally& seen) {
  tx_actor& t = tx_.at(actor);
  check(seen == t.committed, name(actor) + " answered a get with " + show(seen) +
                                 ", not the state its commits left, " + show(t.committed));
  t.last_get = seen;
  ++gets_seen_;
}

void model::committed_ghost() {
  fail("an effect staged by a handler that threw became visible (its on_commit action ran)");
}

// ---- the end ----

void model::end_of_run(const tact::worker_stats& s) {
  at_end();
  for (auto& [id, c] : classic_)
    for (int sender = 0; sender < static_cast<int>(senders); ++sender) {
      auto& left = c.expected[sender];
      // Sent after the pill and not received: dead letters.
      for (; !left.empty() && left.back().maybe; left.pop_back()) ++dead_letters_;
      check(left.empty(), name(id) + " never received message " +
                              std::to_string(left.empty() ? 0 : left.front().seq) + " from " +
                              sender_name(sender));
    }
  for (const auto& [id, t] : tx_) {
    check(t.adds.empty(), name(id) + " never committed an add from " +
                              sender_name(t.adds.empty() ? 0 : std::get<0>(*t.adds.begin())));
    check(t.passes.empty(), name(id) + " never committed a pass");
    check(t.committed == t.expected, name(id) + " ends with " + show(t.committed) +
                                         ", the reference with " + show(t.expected));
  }
  const auto equal = [&](std::uint64_t engine, std::uint64_t reference, const char* what) {
    check(engine == reference, std::string{what} + ": the engine counts " +
                                   std::to_string(engine) + ", the reference " +
                                   std::to_string(reference));
  };
  const auto diagnostics = [&](diagnostic_kind k) {
    const auto it = diagnostics_.find(k);
    return it == diagnostics_.end() ? std::uint64_t{0} : it->second;
  };
  // Conservation: nothing is left queued after stop(), so every envelope
  // posted ran; a send to a finished actor is not posted but counted.
  check(s.messages_sent == s.messages_processed,
        "the engine counts " + std::to_string(s.messages_sent) + " messages sent and " +
            std::to_string(s.messages_processed) + " processed");
  equal(s.actors_created, classic_spawned_, "classic actors created");
  equal(s.actors_finished, pills_, "classic actors finished");
  equal(s.dead_letters, dead_letters_, "dead letters");
  equal(diagnostics(diagnostic_kind::send_to_finished) +
            diagnostics(diagnostic_kind::delivery_to_finished),
        dead_letters_, "dead letters reported");
  equal(diagnostics(diagnostic_kind::messages_unreceived), dead_letters_ > 0 ? 1 : 0,
        "reports of messages never received at stop()");
  equal(diagnostics(diagnostic_kind::behaviour_exception), exceptions_expected_,
        "exceptions reported from classic behaviours");
  equal(diagnostics(diagnostic_kind::message_never_sent), 0, "messages reported never sent");
  equal(diagnostics(diagnostic_kind::actor_destroyed_unfinished), 0,
        "actors reported destroyed unfinished");
  equal(diagnostics(diagnostic_kind::actor_destroyed_with_queued_messages), 0,
        "actors reported destroyed with messages queued");
  equal(diagnostics(diagnostic_kind::idle_with_live_actors), 0,
        "reports of live actors left when the system stopped");
  equal(diagnostics(diagnostic_kind::topology_unavailable), 0, "topology reports");
  equal(s.tx_rollbacks, rollbacks_expected_, "transactional rollbacks");
  equal(rollbacks_seen_, rollbacks_expected_, "rollbacks reported to on_rollback");
  equal(s.tx_unmatched, unmatched_expected_, "transactional messages no handler matched");
  equal(diagnostics(diagnostic_kind::unmatched_message), unmatched_expected_,
        "transactional messages reported unmatched");
  equal(s.tx_dropped, dropped_expected_, "transactional sends to an empty reference");
  equal(gets_seen_, gets_expected_, "gets committed");
  equal(s.tx_commits, adds_seen_ + passes_seen_ + gets_seen_ + customer_commits_expected_,
        "transactional commits");
  equal(s.tx_becomes, adds_seen_, "transactional becomes");
  equal(s.tx_collisions, 0, "become collisions on one thread");
}

void model::after_teardown() {
  for (std::size_t n = 0; n < notes_.size(); ++n)
    check(notes_[n].destroyed == 1, "note " + std::to_string(n) + " was never destroyed (leaked)");
  check(closures_ == 0, std::to_string(closures_) +
                            " copies of transactional behaviours outlived their system");
}

}  // namespace tact_fuzz
