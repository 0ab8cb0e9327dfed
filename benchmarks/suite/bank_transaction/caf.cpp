// bank_transaction for CAF 0.17: the same protocol, random draws and
// message counts as tact.cpp (which documents the workload), written as CAF
// event-based actors. A locked account keeps what arrives in a deque and
// handles it when it unlocks, as the tact account does (Savina's manual
// stash). The CAF team's port instead becomes a behaviour that skips all
// but the acknowledgement; CAF then tries every skipped message again at
// each unbecome, which grows with the backlog (see logistic_map/caf.cpp,
// where it is quadratic).
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "savina.hpp"
#include "suite.hpp"
#include "transfers.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using debit_atom = caf::atom_constant<caf::atom("debit")>;

using suite::bank::draw;
using suite::bank::transfer;

// Written by each account when it stops; read by main after
// await_all_actors_done().
struct account_outcome {
  std::uint64_t received = 0;
  std::int64_t balance = 0;
};

// A Credit or a Debit that arrived while the account was locked.
struct stashed {
  bool credit;
  std::int64_t cents;
  caf::actor other;     // a Credit's destination, or a Debit's source
  caf::actor reply_to;  // a Credit's teller
};

struct account_state {
  account_outcome counts;
  bool locked = false;
  caf::actor teller;  // whom the transfer in progress is acknowledged to
  std::deque<stashed> stash;
};

caf::behavior account_actor(caf::stateful_actor<account_state>* self, account_outcome* out) {
  auto transfer_out = [=](std::int64_t cents, const caf::actor& recipient, caf::actor teller) {
    auto& s = self->state;
    s.counts.balance -= cents;
    s.teller = std::move(teller);
    self->send(recipient, debit_atom::value, cents);
    s.locked = true;
  };
  auto deposit = [=](std::int64_t cents, const caf::actor& source) {
    self->state.counts.balance += cents;
    self->send(source, ack_atom::value);
  };
  return {
      [=](credit_atom, std::int64_t cents, const caf::actor& recipient) {
        auto& s = self->state;
        ++s.counts.received;
        auto teller = caf::actor_cast<caf::actor>(self->current_sender());
        if (s.locked)
          s.stash.push_back({true, cents, recipient, std::move(teller)});
        else
          transfer_out(cents, recipient, std::move(teller));
      },
      [=](debit_atom, std::int64_t cents) {
        auto& s = self->state;
        ++s.counts.received;
        auto source = caf::actor_cast<caf::actor>(self->current_sender());
        if (s.locked)
          s.stash.push_back({false, cents, std::move(source), caf::actor{}});
        else
          deposit(cents, source);
      },
      // The destination's acknowledgement of our Debit: unlock, tell the
      // teller, and handle what arrived meanwhile, in order.
      [=](ack_atom) {
        auto& s = self->state;
        ++s.counts.received;
        s.locked = false;
        self->send(s.teller, ack_atom::value);
        while (!s.locked && !s.stash.empty()) {
          stashed next = std::move(s.stash.front());
          s.stash.pop_front();
          if (next.credit)
            transfer_out(next.cents, next.other, std::move(next.reply_to));
          else
            deposit(next.cents, next.other);
        }
      },
      [=](stop_atom) {
        ++self->state.counts.received;
        *out = self->state.counts;
        self->quit();
      },
  };
}

struct teller_state {
  std::vector<caf::actor> accounts;
  suite::savina::pseudo_random random{suite::bank::seed};
  std::int64_t completed = 0;
  std::uint64_t received = 0;
};

caf::behavior teller_actor(caf::stateful_actor<teller_state>* self,
                           std::vector<caf::actor> accounts, std::int64_t transactions,
                           std::uint64_t* received) {
  self->state.accounts = std::move(accounts);
  return {
      [=](start_atom) {
        auto& s = self->state;
        ++s.received;
        for (std::int64_t m = 0; m < transactions; ++m) {
          const transfer t = draw(s.random, static_cast<std::int32_t>(s.accounts.size()));
          self->send(s.accounts[static_cast<std::size_t>(t.source)], credit_atom::value, t.cents,
                     s.accounts[static_cast<std::size_t>(t.destination)]);
        }
      },
      [=](ack_atom) {
        auto& s = self->state;
        ++s.received;
        if (++s.completed < transactions) return;
        for (const auto& a : s.accounts) self->send(a, stop_atom::value);
        *received = s.received;
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::bank::params p = suite::bank::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t teller_received = 0;
  std::vector<account_outcome> bank_out(static_cast<std::size_t>(p.accounts));
  const double secs = suite::seconds([&] {
    std::vector<caf::actor> bank;
    bank.reserve(bank_out.size());
    for (auto& a : bank_out) bank.push_back(system.spawn(account_actor, &a));
    auto boss =
        system.spawn(teller_actor, std::move(bank), std::int64_t{p.transactions}, &teller_received);
    caf::anon_send(boss, start_atom::value);
    system.await_all_actors_done();
  });

  const std::vector<std::int64_t> expected = suite::bank::expected_balances(p);
  std::uint64_t delivered = teller_received;
  for (std::size_t i = 0; i < bank_out.size(); ++i) {
    suite::check(bank_out[i].balance == expected[i],
                 "account " + std::to_string(i) + " holds " + std::to_string(bank_out[i].balance) +
                     " cents, expected " + std::to_string(expected[i]));
    delivered += bank_out[i].received;
  }
  const std::uint64_t messages = suite::bank::messages(p);
  suite::check(delivered == messages, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(messages));
  suite::report(o, suite::bench_name("bank_transaction"), "caf", secs, delivered);
}
