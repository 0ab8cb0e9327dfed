// bank_transaction for CAF 0.17: the same protocol, random draws and
// message counts as tact.cpp (which documents the workload), written as CAF
// event-based actors. A locked account is CAF's own idiom, as in the CAF
// team's Savina port: it becomes a behaviour that handles only the
// acknowledgement and skips everything else, which stays in the mailbox
// until it unbecomes.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "savina.hpp"
#include "suite.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using debit_atom = caf::atom_constant<caf::atom("debit")>;

struct transfer {
  std::int32_t source;
  std::int32_t destination;
  std::int64_t cents;
};

transfer draw(suite::savina::pseudo_random& random, std::int32_t accounts) {
  const std::int32_t source = random.next_int(accounts / 10 * 8);
  std::int32_t step = random.next_int(accounts - source);
  if (step == 0) step = 1;
  const auto cents = std::llround(std::abs(random.next_double()) * 1000 * 100);
  return {source, source + step, cents};
}

// Written by each account when it stops; read by main after
// await_all_actors_done().
struct account_outcome {
  std::uint64_t received = 0;
  std::int64_t balance = 0;
};

struct account_state {
  account_outcome counts;
  caf::actor teller;  // whom the transfer in progress is acknowledged to
  caf::behavior locked;
};

caf::behavior account_actor(caf::stateful_actor<account_state>* self, account_outcome* out) {
  self->set_default_handler(caf::skip);
  self->state.locked = {
      [=](ack_atom) {
        auto& s = self->state;
        ++s.counts.received;
        self->send(s.teller, ack_atom::value);
        self->unbecome();
      },
  };
  return {
      [=](credit_atom, std::int64_t cents, const caf::actor& recipient) {
        auto& s = self->state;
        ++s.counts.received;
        s.counts.balance -= cents;
        s.teller = caf::actor_cast<caf::actor>(self->current_sender());
        self->send(recipient, debit_atom::value, cents);
        self->become(caf::keep_behavior, s.locked);
      },
      [=](debit_atom, std::int64_t cents) {
        auto& s = self->state;
        ++s.counts.received;
        s.counts.balance += cents;
        return ack_atom::value;
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
  suite::savina::pseudo_random random{123456};
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
          self->send(s.accounts[static_cast<std::size_t>(t.source)], credit_atom::value,
                     t.cents, s.accounts[static_cast<std::size_t>(t.destination)]);
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
  const auto accounts = o.param("accounts", 16'000, 1'000);
  const auto transactions = o.param("transactions", 500'000, 20'000);
  suite::check(accounts >= 10 && accounts <= 1'000'000 && transactions >= 1,
               "--accounts must be between 10 and 1,000,000, --transactions at least 1");

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::uint64_t teller_received = 0;
  std::vector<account_outcome> bank_out(static_cast<std::size_t>(accounts));
  const double secs = suite::seconds([&] {
    std::vector<caf::actor> bank;
    bank.reserve(bank_out.size());
    for (auto& a : bank_out) bank.push_back(system.spawn(account_actor, &a));
    auto boss = system.spawn(teller_actor, std::move(bank), std::int64_t{transactions},
                             &teller_received);
    caf::anon_send(boss, start_atom::value);
    system.await_all_actors_done();
  });

  std::vector<std::int64_t> expected(static_cast<std::size_t>(accounts));
  suite::savina::pseudo_random replay{123456};
  for (std::int64_t m = 0; m < transactions; ++m) {
    const transfer t = draw(replay, static_cast<std::int32_t>(accounts));
    expected[static_cast<std::size_t>(t.source)] -= t.cents;
    expected[static_cast<std::size_t>(t.destination)] += t.cents;
  }
  std::uint64_t delivered = teller_received;
  for (std::size_t i = 0; i < bank_out.size(); ++i) {
    suite::check(bank_out[i].balance == expected[i],
                 "account " + std::to_string(i) + " holds " +
                     std::to_string(bank_out[i].balance) + " cents, expected " +
                     std::to_string(expected[i]));
    delivered += bank_out[i].received;
  }
  const auto n = static_cast<std::uint64_t>(transactions);
  const std::uint64_t messages = 1 + 4 * n + static_cast<std::uint64_t>(accounts);
  suite::check(delivered == messages, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(messages));
  suite::report(o, "bank_transaction", "caf", secs, delivered);
}
