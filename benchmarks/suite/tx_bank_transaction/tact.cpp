// transactional bank_transaction, tact: bank_transaction's workload, draws
// and checks (bank_transaction/tact.cpp documents the Savina protocol) on
// transactional actors. An account's state is its behaviour: open(ledger)
// or locked(ledger, teller, stash), and every Credit, Debit and
// acknowledgement commits a become. A locked account stashes what arrives
// in an immutable queue (stash.hpp) and, when its acknowledgement comes,
// handles the stash in order until a Credit locks it again, all in the one
// handler. The teller's start handler stages every Credit of the burst;
// it counts acknowledgements by become and, after the last, stops every
// account, which hands its balance to main.
//
// Messages, customer first where an answer is due:
//   teller -> source       (teller, credit, cents, destination)
//   source -> destination  (source, debit, cents)
//   destination -> source  (ack), then source -> teller (ack)
//   teller -> account      (report, stop), the account -> report (id, balance)
//
// Accounts and the teller become on every message, so they are spawned
// tx::mode::serialized: one message at a time on a home queue, no
// collisions. The account list is shared by the teller's successive
// behaviours (a shared_ptr to a const vector), not copied into each.
//
// Parameters (full / --quick): as bank_transaction (--accounts 16,000 /
// 1,000, --transactions 500,000 / 20,000).
//
// Timed: creating the actors, the burst and the run to quiescence.
// Checked: every account's balance against the replayed draws, and
// 1 + 4 transactions + accounts messages committed (+ accounts, the
// balances handed to main), none rolled back or unmatched.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tact/transactional.hpp>

#include "../bank_transaction/transfers.hpp"
#include "savina.hpp"
#include "stash.hpp"
#include "suite.hpp"
#include "tx_suite.hpp"

namespace {

namespace tx = tact::tx;

struct start {};
struct stop {};
struct credit {};
struct debit {};
struct ack {};

// What an account is, apart from whether it is locked.
struct ledger {
  std::int64_t id;
  std::int64_t balance;
};

// A Credit or a Debit that arrived while the account was locked.
struct pending {
  bool is_credit;
  std::int64_t cents;
  tx::actor_ref customer;     // a Credit's teller, a Debit's source
  tx::actor_ref destination;  // a Credit's
};

using waiting = suite::bank::stash<pending>;

tx::behaviour open(const ledger& l);
tx::behaviour locked(const ledger& l, const tx::actor_ref& teller, const waiting& stashed);

// A Credit: debit ourselves, send the amount on, wait for its
// acknowledgement.
tx::behaviour transfer_out(ledger l, const tx::actor_ref& teller, std::int64_t cents,
                           const tx::actor_ref& destination, const waiting& stashed) {
  l.balance -= cents;
  tx::send(destination, tx::self(), debit{}, cents);
  return locked(l, teller, stashed);
}

// A Debit: credit ourselves and acknowledge.
ledger deposit(ledger l, std::int64_t cents, const tx::actor_ref& source) {
  l.balance += cents;
  tx::send(source, ack{});
  return l;
}

tx::behaviour open(const ledger& l) {
  return {
      [l](const tx::actor_ref& teller, credit, std::int64_t cents,
          const tx::actor_ref& destination) {
        tx::become(transfer_out(l, teller, cents, destination, waiting{}));
      },
      [l](const tx::actor_ref& source, debit, std::int64_t cents) {
        tx::become(open(deposit(l, cents, source)));
      },
      [l](const tx::actor_ref& report, stop) { tx::send(report, l.id, l.balance); },
  };
}

tx::behaviour locked(const ledger& l, const tx::actor_ref& teller, const waiting& stashed) {
  return {
      [l, teller, stashed](const tx::actor_ref& customer, credit, std::int64_t cents,
                           const tx::actor_ref& destination) {
        tx::become(locked(l, teller, stashed.push({true, cents, customer, destination})));
      },
      [l, teller, stashed](const tx::actor_ref& source, debit, std::int64_t cents) {
        tx::become(locked(l, teller, stashed.push({false, cents, source, {}})));
      },
      // Our transfer's acknowledgement: tell the teller, then handle what
      // arrived meanwhile, in order, until a Credit locks us again.
      [l, teller, stashed](ack) {
        tx::send(teller, ack{});
        ledger now = l;
        for (waiting rest = stashed; !rest.empty();) {
          auto [next, after] = rest.pop();
          if (next.is_credit) {
            tx::become(transfer_out(now, next.customer, next.cents, next.destination, after));
            return;
          }
          now = deposit(now, next.cents, next.customer);
          rest = std::move(after);
        }
        tx::become(open(now));
      },
  };
}

using accounts = std::shared_ptr<const std::vector<tx::actor_ref>>;

tx::behaviour teller(const accounts& bank, std::int64_t transactions, std::int64_t completed,
                     const tx::actor_ref& report) {
  return {
      [bank, transactions](start) {
        suite::savina::pseudo_random random{suite::bank::seed};
        for (std::int64_t m = 0; m < transactions; ++m) {
          const suite::bank::transfer t =
              suite::bank::draw(random, static_cast<std::int32_t>(bank->size()));
          tx::send((*bank)[static_cast<std::size_t>(t.source)], tx::self(), credit{}, t.cents,
                   (*bank)[static_cast<std::size_t>(t.destination)]);
        }
      },
      [bank, transactions, completed, report](ack) {
        if (completed + 1 < transactions) {
          tx::become(teller(bank, transactions, completed + 1, report));
          return;
        }
        for (const tx::actor_ref& a : *bank) tx::send(a, report, stop{});
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::bank::params p = suite::bank::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::vector<std::optional<std::int64_t>> balances(static_cast<std::size_t>(p.accounts));
  // Runs on several workers at once, each message writing its own account.
  const tx::actor_ref report =
      tx::spawn(system, {[&balances](std::int64_t id, std::int64_t cents) {
                  balances[static_cast<std::size_t>(id)] = cents;
                }});
  const tact::worker_stats before = suite::tx::totals(system);
  const double secs = suite::seconds([&] {
    auto bank = std::make_shared<std::vector<tx::actor_ref>>();
    bank->reserve(balances.size());
    for (std::int64_t i = 0; i < p.accounts; ++i)
      bank->push_back(tx::spawn(system, open({i, 0}), tx::mode::serialized));
    tx::send(tx::spawn(system, teller(std::move(bank), p.transactions, 0, report),
                       tx::mode::serialized),
             start{});
    system.await_quiescence();
  });

  const std::vector<std::int64_t> expected = suite::bank::expected_balances(p);
  for (std::size_t i = 0; i < balances.size(); ++i) {
    suite::check(balances[i].has_value(), "account " + std::to_string(i) + " did not stop");
    suite::check(*balances[i] == expected[i], "account " + std::to_string(i) + " holds " +
                                                  std::to_string(*balances[i]) +
                                                  " cents, expected " +
                                                  std::to_string(expected[i]));
  }
  const std::uint64_t messages = suite::bank::messages(p);
  suite::tx::check_commits(system, before, messages + static_cast<std::uint64_t>(p.accounts));
  system.stop();
  suite::report(o, "tx_bank_transaction", "tact", secs, messages);
}
