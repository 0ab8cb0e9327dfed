#include "harness.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include <tact/ask.hpp>
#include <tact/tact.hpp>
#include <tact/testing.hpp>
#include <tact/timer.hpp>
#include <tact/transactional.hpp>

#include "model.hpp"
#include "probe.hpp"
#include "tally.hpp"

namespace tact_fuzz {
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;
using std::chrono::milliseconds;

static_assert(tact::build::checks,
              "the fuzzed programs send to finished actors, which is defined only with checks on");

// Where a probe lives when the test owns its storage: destroy_msg runs its
// destructor and leaves the storage to the test.
struct probe_storage {
  alignas(probe) std::byte bytes[sizeof(probe)];
};

// An actor of the program, as the test holds it.
struct actor_slot {
  bool classic = false;
  probe* classic_actor = nullptr;  // until delete_msg or destroy_msg is sent to it
  std::unique_ptr<probe_storage> storage;  // set: placed there, not made by spawn
  bool pilled = false;
  bool finished_by_pill = false;  // finished_msg: the test destroys it after stop()
  int pending_relays = 0;         // relays naming it, alive: it must not be deleted
  tx::actor_ref ref;              // a tally, until released
};

// A timer the program started, and its index in the model.
struct started_timer {
  tact::timer handle;
  std::size_t index;
};

std::chrono::nanoseconds ask_delay(std::uint8_t c) { return milliseconds{(c & 7) * 10}; }
std::chrono::nanoseconds ask_timeout(std::uint8_t c) { return milliseconds{((c >> 3) & 7) * 10}; }
std::chrono::nanoseconds timer_delay(std::uint8_t c) { return milliseconds{(c & 15) * 5}; }
std::int64_t value_of(std::uint8_t b) { return static_cast<std::int8_t>(b); }

class runner {
 public:
  runner(const program& p, model& reference)
      : model_{reference}, system_{p.how, config(p, reference)}, start_{system_.now()} {}

  void apply(const operation& op);
  // After each operation: the clock and the timers agree.
  void compare_time();
  // Runs to idle, reads every tally's final state, finishes every probe,
  // stops the system and compares the totals.
  void finish();

 private:
  static tact::system_config config(const program& p, model& reference) {
    tact::system_config c = tact::testing::deterministic_config();
    c.queues = p.queues;
    c.local_batch = p.local_batch;
    // Counted, not printed: the exceptions are thrown on purpose.
    c.on_diagnostic = [&reference](const tact::diagnostic& d) { reference.diagnosed(d.kind); };
    c.on_rollback = [&reference](const tx::rollback&) { reference.rolled_back(); };
    return c;
  }

  // The `arg`-th (modulo their number) actor for which `eligible` holds.
  template <class F>
  std::optional<int> pick(std::uint8_t arg, F eligible) const {
    std::vector<int> ids;
    for (int id = 0; id < static_cast<int>(count_); ++id)
      if (eligible(actors_[id])) ids.push_back(id);
    if (ids.empty()) return std::nullopt;
    return ids[arg % ids.size()];
  }
  std::optional<int> probe_named(std::uint8_t arg) const {
    return pick(arg, [](const actor_slot& s) { return s.classic && s.classic_actor != nullptr; });
  }
  std::optional<int> unpilled_probe(std::uint8_t arg) const {
    return pick(arg, [](const actor_slot& s) {
      return s.classic && s.classic_actor != nullptr && !s.pilled;
    });
  }
  std::optional<int> held_tally(std::uint8_t arg) const {
    return pick(arg, [](const actor_slot& s) { return !s.classic && s.ref; });
  }

  void spawn_tx(bool serialized);
  void ask_classic(int id, answer how, std::chrono::nanoseconds delay,
                   std::chrono::nanoseconds timeout);
  void ask_tx(int id, answer how, std::chrono::nanoseconds delay, std::chrono::nanoseconds timeout);
  void pill(int id, bool deleting);
  void compare(const char* what, bool has_value, tact::ask_error error,
               const ask_expectation& expected);

  model& model_;
  // Before the system: relays still queued at its end point into these,
  // and probes' storage must outlive their last landing.
  std::array<actor_slot, max_actors> actors_{};
  std::size_t count_ = 0;
  std::vector<started_timer> timers_;
  tact::testing::deterministic_system system_;
  const std::chrono::steady_clock::time_point start_;
};

void runner::apply(const operation& op) {
  switch (op.code) {
    case opcode::spawn_classic:
      if (count_ < max_actors) {
        actor_slot& s = actors_[count_++];
        s.classic = true;
        const int id = model_.spawn_classic();
        if ((op.a & 1) != 0) {
          s.storage = std::make_unique<probe_storage>();
          s.classic_actor = new (s.storage->bytes) probe{system_, model_, id};
        } else {
          s.classic_actor = &system_.spawn<probe>(system_, model_, id);
        }
      }
      break;
    case opcode::spawn_tx:
      if (count_ < max_actors) spawn_tx((op.a & 1) != 0);
      break;
    case opcode::note:
      if (const auto to = probe_named(op.a)) {
        const std::uint32_t seq = model_.send(*to, item::note);
        tact::send(*actors_[*to].classic_actor, *new note{model_, model_.new_note(), from_test, seq});
      }
      break;
    case opcode::relay: {
      const auto via = probe_named(op.a);
      const auto to = probe_named(op.b);
      if (!via || !to) break;
      const auto [seq, note_seq] = model_.relay(*via, *to);
      actor_slot& target = actors_[*to];
      tact::send(*actors_[*via].classic_actor,
                 *new relay{*target.classic_actor, *to, seq, note_seq, target.pending_relays});
      break;
    }
    case opcode::boom:
      if (const auto to = probe_named(op.a))
        tact::send(*actors_[*to].classic_actor, *new boom{model_.send(*to, item::boom)});
      break;
    case opcode::tx_add:
      if (const auto to = held_tally(op.a)) {
        const std::int64_t value = value_of(op.b);
        const std::uint32_t seq = model_.tx_add(*to, value);
        tx::send(actors_[*to].ref, add{from_test, seq, value});
      }
      break;
    case opcode::tx_boom: {
      const auto to = held_tally(op.a);
      const auto victim = held_tally(op.b);
      if (!to || !victim) break;
      model_.tx_boom();
      tx::send(actors_[*to].ref, kaboom{actors_[*victim].ref});
      break;
    }
    case opcode::tx_pass: {
      const auto via = held_tally(op.a);
      const auto to = held_tally(op.b);
      if (!via || !to) break;
      const std::int64_t value = value_of(op.c);
      const std::uint32_t seq = model_.tx_pass(*via, *to, value);
      tx::send(actors_[*via].ref, pass{actors_[*to].ref, *to, seq, value});
      break;
    }
    case opcode::ask_classic:
      if (const auto to = probe_named(op.a))
        ask_classic(*to, static_cast<answer>(op.b % 4), ask_delay(op.c), ask_timeout(op.c));
      break;
    case opcode::ask_tx:
      if (const auto to = held_tally(op.a))
        ask_tx(*to, static_cast<answer>(op.b % 4), ask_delay(op.c), ask_timeout(op.c));
      break;
    case opcode::timer_classic:
      if (const auto to = probe_named(op.a)) {
        probe& target = *actors_[*to].classic_actor;
        // Whether its pill has run: then send_after refuses, a dead letter.
        // The engine says; the model can only say that a pill was posted
        // (not when it runs), so it checks that much.
        const bool finished = target.finished();
        model_.check(!finished || model_.pilled(*to), "a probe finished without a pill");
        const std::size_t n = model_.new_note();
        const auto seq = static_cast<std::uint32_t>(model_.timers());
        tact::timer handle =
            tact::send_after(timer_delay(op.c), target, *new note{model_, n, from_timer, seq});
        if (finished) {
          model_.check(!handle, "send_after to a finished probe returned a timer");
          model_.timer_refused();
        } else {
          model_.check(static_cast<bool>(handle), "send_after to a live probe returned no timer");
          timers_.push_back({handle, model_.start_classic_timer(*to, n, timer_delay(op.c))});
        }
      }
      break;
    case opcode::timer_tx:
      if (const auto to = held_tally(op.a)) {
        const std::int64_t value = value_of(op.b);
        const std::size_t index = model_.start_tx_timer(*to, value, timer_delay(op.c));
        timers_.push_back(
            {tx::send_after(timer_delay(op.c), actors_[*to].ref,
                            add{from_timer, static_cast<std::uint32_t>(index), value}),
             index});
      }
      break;
    case opcode::cancel:
      if (!timers_.empty()) {
        started_timer& t = timers_[op.a % timers_.size()];
        const bool expected = model_.cancel(t.index);
        const bool cancelled = t.handle.cancel();
        model_.check(cancelled == expected,
                     std::string{"cancel() returned "} + (cancelled ? "true" : "false") +
                         " for timer " + std::to_string(t.index));
      }
      break;
    case opcode::advance:
      model_.advance(milliseconds{op.c});
      system_.advance_time(milliseconds{op.c});
      break;
    case opcode::run_some:
      for (int i = 0; i <= op.a % 8; ++i) system_.run_one();
      break;
    case opcode::run_all:
      system_.run();
      break;
    case opcode::finish:
      if (const auto to = unpilled_probe(op.a)) pill(*to, false);
      break;
    case opcode::kill:
      // Not while a relay names it: the relay's receiver would send to a
      // deleted actor, which is the program's error, not the engine's.
      if (const auto to = unpilled_probe(op.a)) pill(*to, actors_[*to].pending_relays == 0);
      break;
    case opcode::tx_release:
      if (const auto to = held_tally(op.a)) {
        model_.tx_release(*to);
        actors_[*to].ref.reset();
      }
      break;
    case opcode::tx_to_nobody:
      model_.tx_to_nobody();
      tx::send(tx::actor_ref{}, add{from_test, 0, 0});
      break;
    case opcode::tx_unmatched:
      if (const auto to = held_tally(op.a)) {
        model_.tx_unmatched();
        tx::send(actors_[*to].ref, stray{});
      }
      break;
    case opcode::stop:
    case opcode::count:
      break;
  }
}

void runner::spawn_tx(bool serialized) {
  const int id = model_.spawn_tx(serialized);
  actor_slot& s = actors_[count_++];
  s.ref = tx::spawn(system_, tally_of(&model_, id, {}, liveness{model_}),
                    serialized ? tx::mode::serialized : tx::mode::parallel);
}

void runner::pill(int id, bool deleting) {
  actor_slot& s = actors_[id];
  model_.pill(id);
  s.pilled = true;
  probe& target = *s.classic_actor;
  if (deleting) {
    s.classic_actor = nullptr;  // the engine deletes or destroys it
    if (s.storage)
      tact::send(target, tact::destroy_msg);
    else
      tact::send(target, tact::delete_msg);
  } else {
    s.finished_by_pill = true;
    tact::send(target, tact::finished_msg);
  }
}

void runner::compare(const char* what, bool has_value, tact::ask_error error,
                     const ask_expectation& expected) {
  static constexpr const char* outcomes[] = {"a reply", "failed", "no_reply", "a timeout"};
  const int got = has_value                             ? ask_expectation::reply
                  : error == tact::ask_error::failed   ? ask_expectation::failed
                  : error == tact::ask_error::no_reply ? ask_expectation::no_reply
                                                       : ask_expectation::timeout;
  model_.check(got == expected.outcome, std::string{what} + " ended with " + outcomes[got] +
                                            ", the reference expects " +
                                            outcomes[expected.outcome]);
  const auto clock = system_.now() - start_;
  model_.check(clock == expected.clock,
               std::string{what} + " left the clock at " + std::to_string(clock.count()) +
                   " ns, the reference at " + std::to_string(expected.clock.count()) + " ns");
}

void runner::ask_classic(int id, answer how, std::chrono::nanoseconds delay,
                         std::chrono::nanoseconds timeout) {
  const std::uint32_t seq = model_.send(id, item::question, how);
  const ask_expectation expected = model_.ask_classic(id, seq, how, delay, timeout);
  const auto result = tact::ask(*actors_[id].classic_actor, question{seq, how, delay}, timeout);
  compare("an ask of a probe", result.has_value(), result.error(), expected);
  if (result)
    model_.check(*result == *expected.value, "a probe answered " + std::to_string(*result) +
                                                  ", not " + std::to_string(*expected.value));
}

void runner::ask_tx(int id, answer how, std::chrono::nanoseconds delay,
                    std::chrono::nanoseconds timeout) {
  const ask_expectation expected = model_.ask_tx(id, how, delay, timeout);
  const auto result = tx::ask<tally>(system_, actors_[id].ref, timeout, get{how, delay});
  compare("an ask of a tally", result.has_value(), result.error(), expected);
  if (result)
    model_.check(model_.last_get(id) == *result,
                 "a tally's reply differs from the state its get handler saw");
}

void runner::compare_time() {
  const auto clock = system_.now() - start_;
  model_.check(clock == model_.clock(), "the virtual clock reads " + std::to_string(clock.count()) +
                                            " ns, the reference " +
                                            std::to_string(model_.clock().count()) + " ns");
  model_.check(system_.pending_timers() == model_.pending_timers(),
               std::to_string(system_.pending_timers()) + " timers pending, the reference has " +
                   std::to_string(model_.pending_timers()));
}

void runner::finish() {
  system_.run();
  // Every add sent has committed by now: each tally answers with the state
  // the reference computed, whatever order its messages ran in.
  for (int id = 0; id < static_cast<int>(count_); ++id)
    if (!actors_[id].classic && actors_[id].ref) {
      ask_tx(id, answer::now, 0ms, 0ms);
      model_.check(model_.last_get(id) == model_.expected_tally(id),
                   "a tally's final state differs from the reference's");
    }
  for (int id = 0; id < static_cast<int>(count_); ++id)
    if (actors_[id].classic && !actors_[id].pilled) pill(id, actors_[id].pending_relays == 0);
  system_.run();
  for (actor_slot& s : actors_) s.ref.reset();
  system_.stop();
  model_.end_of_run(system_.stats().total);
  for (actor_slot& s : actors_) {
    if (!s.finished_by_pill) continue;
    if (s.storage)
      std::exchange(s.classic_actor, nullptr)->~probe();
    else
      delete std::exchange(s.classic_actor, nullptr);
  }
}

}  // namespace

void run(const program& p) {
  model reference{*p.how.seed, p.local_batch > 0};
  {
    runner r{p, reference};
    for (std::size_t i = 0; i < p.operations.size(); ++i) {
      reference.at(i, p.operations[i]);
      r.apply(p.operations[i]);
      r.compare_time();
    }
    reference.at_end();
    r.finish();
  }
  reference.after_teardown();
}

}  // namespace tact_fuzz
