#pragma once

#include <chrono>
#include <cstdint>

#include <tact/transactional.hpp>

#include "model.hpp"
#include "thrown.hpp"

// The transactional actor of the fuzzed programs: a tally of the values
// added to it, kept as what its behaviour captures and changed only by
// become. Each handler stages an on_commit action that tells the model
// what committed and the state the handler ran against, so the model sees
// exactly the commits, and nothing of a handler that threw.
namespace tact_fuzz {

// Transactional messages (single elements).
struct add {
  int sender;
  std::uint32_t seq;
  std::int64_t value;
};
struct pass {  // send `to` (add value)
  tact::tx::actor_ref to;
  int to_id;
  std::uint32_t seq;
  std::int64_t value;
};
struct kaboom {  // stage effects, then throw
  tact::tx::actor_ref victim;
};
struct get {  // the customer comes first: a request
  answer how;
  std::chrono::nanoseconds delay;
};
struct stray {};  // no handler takes it

// Counts the copies of behaviours alive in the model: a capture of every
// handler that builds a behaviour, so that a behaviour never reclaimed (a
// rolled-back become, a child created by a handler that threw) shows.
class liveness {
 public:
  explicit liveness(model& m) : counter_{&m.closures()} { ++*counter_; }
  liveness(const liveness& other) noexcept : counter_{other.counter_} { ++*counter_; }
  liveness& operator=(const liveness&) = delete;
  ~liveness() { --*counter_; }

 private:
  long* counter_;
};

inline tact::tx::behaviour tally_of(model* reference, int id, tally now, const liveness& alive) {
  namespace tx = tact::tx;
  return {
      [reference, id, now, alive](const add& m) {
        tx::become(tally_of(reference, id, {now.sum + m.value, now.count + 1}, alive));
        tx::on_commit([reference, id, now, m] {
          reference->committed_add(id, m.sender, m.seq, m.value, now);
        });
      },
      [reference, id](const pass& m) {
        tx::send(m.to, add{id, m.seq, m.value});
        tx::on_commit(
            [reference, id, m] { reference->committed_pass(id, m.to_id, m.seq, m.value); });
      },
      [reference, now, alive](const kaboom& m) {
        // Everything a handler can stage, none of which may happen.
        tx::become(tally_of(reference, from_nowhere, {now.sum + 1, now.count + 1}, alive));
        tx::send(m.victim, add{from_nowhere, 0, 1});
        tx::send(tx::create(tally_of(reference, from_nowhere, {}, alive)), add{from_nowhere, 0, 1});
        tx::send(tx::self(), add{from_nowhere, 0, 1});
        tx::on_commit([reference] { reference->committed_ghost(); });
        throw thrown_on_purpose{};
      },
      [reference, id, now](const tx::actor_ref& customer, const get& m) {
        switch (m.how) {
          case answer::now:
            tx::send(customer, now);
            break;
          case answer::never:
            break;  // the customer is dropped with the message: no_reply
          case answer::fail:
            throw thrown_on_purpose{};
          case answer::later:
            tx::send_after(m.delay, customer, now);  // starts if this commits
            break;
        }
        tx::on_commit([reference, id, now] { reference->committed_get(id, now); });
      }};
}

}  // namespace tact_fuzz
