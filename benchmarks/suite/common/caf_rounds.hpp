#pragma once

// The executor workload's groups for CAF (the counterpart of
// benchmarks/workloads/executor.hpp, which the tact programs use): actors
// that, round after round, each send one message to every other member of
// their group and wait for one from each. The executor, balance_one and
// balance_multi programs share it, as their tact versions share
// executor.hpp.
//
// Each member learns its group from a join message, starts on a start
// message, and after its last round reports its counts to `done_to` and
// quits. Main sends every join before any start, so a member has its group
// before any tick can reach it.

#include <caf/all.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "suite.hpp"

namespace suite::caf_rounds {

using join_atom = caf::atom_constant<caf::atom("join")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct params {
  std::uint32_t actors = 0;  // a multiple of `group`
  std::uint32_t group = 0;   // at least 2
  std::uint32_t rounds = 0;  // at least 1
  std::uint32_t work = 0;    // dummy computation steps per message, as in executor.hpp
};

// Refuses, as tact's round_groups does, parameters that cannot form groups.
inline void validate(const params& p) {
  suite::check(p.group >= 2, "group must be at least 2");
  suite::check(p.actors > 0 && p.actors % p.group == 0,
               "actors must be a positive multiple of group");
  suite::check(p.rounds >= 1, "rounds must be at least 1");
}

struct member_state {
  std::vector<caf::actor> peers;  // the group without this member
  std::uint32_t round = 0;
  std::uint64_t pending[2] = {0, 0};  // ticks in for this round and the next, by parity
  std::uint64_t received = 0;
  std::uint64_t checksum = 0;
  bool started = false;
};

using member_actor = caf::stateful_actor<member_state>;

inline void send_round(member_actor* self) {
  const std::uint32_t parity = self->state.round % 2;
  for (const caf::actor& peer : self->state.peers) self->send(peer, tick_atom::value, parity);
}

// Completes every round whose ticks are all in (the next round's may all
// have arrived while this one was open); after the last, reports and quits.
inline void advance(member_actor* self, std::uint32_t rounds, const caf::actor& done_to) {
  auto& s = self->state;
  while (s.pending[s.round % 2] == s.peers.size()) {
    s.pending[s.round % 2] = 0;
    if (++s.round == rounds) {
      self->send(done_to, done_atom::value, s.received, s.round, s.checksum);
      self->quit();
      return;
    }
    send_round(self);
  }
}

inline caf::behavior member(member_actor* self, std::uint32_t rounds, std::uint32_t work,
                            caf::actor done_to) {
  return {
      [=](join_atom, const std::vector<caf::actor>& group) {
        for (const caf::actor& a : group)
          if (a != self) self->state.peers.push_back(a);
      },
      [=](start_atom) {
        self->state.started = true;
        send_round(self);
        advance(self, rounds, done_to);
      },
      [=](tick_atom, std::uint32_t parity) {
        auto& s = self->state;
        ++s.received;
        for (std::uint32_t i = 0; i < work; ++i) s.checksum = s.checksum * 6364136223846793005ull + i;
        ++s.pending[parity % 2];
        if (s.started) advance(self, rounds, done_to);
      },
  };
}

inline caf::actor spawn_member(caf::actor_system& system, const params& p, caf::actor done_to) {
  return system.spawn(member, p.rounds, p.work, std::move(done_to));
}

// Groups consecutive members, sends every join and then every start.
inline void start(caf::scoped_actor& main_actor, const std::vector<caf::actor>& members,
                  const params& p) {
  for (std::size_t first = 0; first < members.size(); first += p.group) {
    const std::vector<caf::actor> group(members.begin() + static_cast<std::ptrdiff_t>(first),
                                        members.begin() + static_cast<std::ptrdiff_t>(first + p.group));
    for (const caf::actor& m : group) main_actor->send(m, join_atom::value, group);
  }
  for (const caf::actor& m : members) main_actor->send(m, start_atom::value);
}

// Waits for every member's report and checks it, as round_groups::check
// does; returns the round messages received over all members.
inline std::uint64_t gather(caf::scoped_actor& main_actor, const params& p) {
  const std::uint64_t per_member = std::uint64_t{p.group - 1} * p.rounds;
  std::uint64_t total = 0;
  std::uint32_t wrong = 0;
  for (std::uint32_t i = 0; i < p.actors; ++i)
    main_actor->receive(
        [&](done_atom, std::uint64_t received, std::uint32_t rounds_done, std::uint64_t) {
          if (received != per_member || rounds_done != p.rounds) ++wrong;
          total += received;
        });
  suite::check(wrong == 0, std::to_string(wrong) + " actors missed rounds or messages");
  const std::uint64_t expected = std::uint64_t{p.actors} * per_member;
  suite::check(total == expected, std::to_string(total) + " messages received, expected " +
                                      std::to_string(expected));
  return total;
}

// ---- the balance workloads ----

using poke_atom = caf::atom_constant<caf::atom("poke")>;

// Quits on its first message, as tact's balance_dummy finishes.
inline caf::behavior dummy(caf::event_based_actor* self) {
  return {
      [=](poke_atom) { self->quit(); },
  };
}

// Whether each actor, in creation order, is a member (true) or a dummy, as
// tact's balance workloads create them (workloads/balance.hpp): tact gives
// the i-th actor queue i mod Q, with Q = 16 queues per worker (one queue for
// one worker, tact's defaults), worker w owns queues [w Q / N, (w + 1) Q / N),
// and a queue of a loaded worker (one in every `stride`, from worker 0)
// gets a member, any other a dummy, until `members` exist. CAF has no such
// placement (an actor runs on whichever worker a message finds it from),
// so here the layout fixes only the same actors, created in the same order.
inline std::vector<bool> balance_layout(std::uint32_t workers, std::uint32_t stride,
                                        std::uint32_t members) {
  constexpr std::uint32_t queues_per_worker = 16;
  const std::uint32_t queues = workers == 1 ? 1 : queues_per_worker * workers;
  std::vector<bool> loaded(queues);
  for (std::uint32_t w = 0; w < workers; ++w)
    for (std::uint64_t q = std::uint64_t{w} * queues / workers;
         q < std::uint64_t{w + 1} * queues / workers; ++q)
      loaded[q] = w % stride == 0;
  std::vector<bool> order;
  for (std::uint64_t i = 0, made = 0; made < members; ++i) {
    const bool member = loaded[i % queues];
    order.push_back(member);
    made += member ? 1 : 0;
  }
  return order;
}

// Runs a balance workload on `system`'s workers and checks it: the members
// of `p` (p.actors of them) among dummies laid out as tact lays them out,
// every dummy poked, then the rounds. Returns the round messages received.
inline std::uint64_t run_balance(caf::actor_system& system, caf::scoped_actor& main_actor,
                                 const params& p, std::uint32_t workers, std::uint32_t stride) {
  std::vector<caf::actor> members, dummies;
  members.reserve(p.actors);
  for (const bool member : balance_layout(workers, stride, p.actors)) {
    if (member)
      members.push_back(spawn_member(system, p, caf::actor{main_actor}));
    else
      dummies.push_back(system.spawn(dummy));
  }
  for (const caf::actor& d : dummies) main_actor->send(d, poke_atom::value);
  start(main_actor, members, p);
  return gather(main_actor, p);
}

// The body of both balance programs (balance_one/, balance_multi/): loaded
// workers are every `stride`-th, where stride_of(workers) decides.
inline int balance_main(int argc, char** argv, const char* bench,
                        std::uint32_t (*stride_of)(std::uint32_t workers)) {
  options o{argc, argv};
  const std::uint32_t workers = o.threads();
  const std::uint32_t stride = stride_of(workers);
  const std::uint32_t loaded_workers = (workers + stride - 1) / stride;
  params p{.actors = static_cast<std::uint32_t>(o.param("actors", 2'000, 400)),
           .group = static_cast<std::uint32_t>(o.param("group", 100, 100)),
           .rounds = static_cast<std::uint32_t>(o.param("rounds", 40, 5)),
           .work = static_cast<std::uint32_t>(o.param("work", 0, 0))};
  validate(p);
  p.actors *= loaded_workers;

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(workers));
  caf::actor_system system{cfg};
  std::uint64_t messages = 0;
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = seconds([&] { messages = run_balance(system, main_actor, p, workers, stride); });
  }
  system.await_all_actors_done();
  report(o, bench, "caf", secs, messages);
  return 0;
}

}  // namespace suite::caf_rounds
