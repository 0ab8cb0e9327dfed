// bank_transaction (Savina's "banking", no. 16 of the list in the CAF locality
// thesis, 6.2.1): a teller sends `transactions` transfers in one burst, each to a
// random source account, which debits itself, sends the amount to a random
// destination account and waits for its acknowledgement before it
// acknowledges to the teller. While it waits, an account is locked: every
// other transfer or deposit that reaches it is stashed and handled, in order,
// once the acknowledgement is in. It measures request/response chains between
// many actors under a burst, with actors that must defer work (Savina's
// synchronous request-response pattern).
//
// Savina's protocol (the manual-stash variant), kept as is: the source id
// is drawn below 80% of the accounts and the destination above the
// source, so waiting chains only go up and cannot deadlock; the teller's draws come
// from Savina's PseudoRandom seeded 123456. Two changes: amounts are
// integer cents (llround of Savina's amount * 100) and balances start at 0,
// so the result can be checked exactly (Savina's doubles near DBL_MAX
// cannot be); and a stashed message is handled directly when the account
// unlocks, where Savina's version re-sends it to itself (the CAF program
// does the same as this one). In all
//   1 start + transactions Credit + transactions Debit
//   + 2 transactions acknowledgements + accounts Stop.
//
// Parameters (full / --quick):
//   --accounts      accounts, at least 10 (16,000 / 1,000). Savina's
//                   default is 1,000; the CAF locality study uses 16,000.
//   --transactions  transfers (500,000 / 20,000). Savina's default is
//                   50,000, the CAF locality study's 800,000.
//
// Each transfer is one message object that travels its whole chain:
// teller -> source (Savina's Credit), source -> destination (Debit),
// destination -> source (the acknowledgement) and source -> teller (the
// teller's acknowledgement), its stage saying which it is at (tact's
// request-and-reply-in-one-object idiom, taken to the whole chain). The
// burst needs one per transfer, all in flight at once: the teller
// allocates them in one array before it starts. Every account's final
// balance is independent of the interleaving, so main replays the teller's
// draws and checks each one. The timed region covers creating the actors,
// the burst and the run to quiescence.
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "savina.hpp"
#include "suite.hpp"
#include "transfers.hpp"

namespace {

class account;
class teller;

struct start_msg : tact::message {};
struct stop_msg : tact::message {};

// One transfer, through the four messages of its chain.
struct transfer_msg : tact::message {
  enum class stage : std::uint8_t { credit, debit, acknowledged, done };
  stage at = stage::credit;
  account* source = nullptr;
  account* destination = nullptr;
  std::int64_t cents = 0;
};

// One transfer as the teller draws it (Teller.generateWork).
using suite::bank::draw;
using suite::bank::transfer;

class account final : public tact::actor {
 public:
  account(tact::actor_system& system, teller& boss) : actor{system}, teller_{boss} {}

  std::uint64_t received() const noexcept { return received_; }
  std::int64_t balance() const noexcept { return balance_; }

  inline tact::allocation receive(transfer_msg& t);
  tact::allocation receive(stop_msg&) {
    ++received_;
    return Finished;
  }

 private:
  // A Credit or a Debit: the same work whether it is new or was stashed.
  void handle(transfer_msg& t) {
    if (t.at == transfer_msg::stage::credit) {
      balance_ -= t.cents;
      t.at = transfer_msg::stage::debit;
      *t.destination | t;
      locked_ = true;
    } else {
      balance_ += t.cents;
      t.at = transfer_msg::stage::acknowledged;
      *t.source | t;
    }
  }

  teller& teller_;
  std::int64_t balance_ = 0;
  bool locked_ = false;
  std::deque<transfer_msg*> stash_;
  std::uint64_t received_ = 0;
};

class teller final : public tact::actor {
 public:
  teller(tact::actor_system& system, std::int64_t transactions)
      : actor{system}, transfers_(static_cast<std::size_t>(transactions)) {}

  // Before the start message.
  void open(std::vector<std::unique_ptr<account>>& accounts) { accounts_ = &accounts; }

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(start_msg&) {
    ++received_;
    auto& accounts = *accounts_;
    for (transfer_msg& t : transfers_) {
      const transfer drawn = draw(random_, static_cast<std::int32_t>(accounts.size()));
      t.source = accounts[static_cast<std::size_t>(drawn.source)].get();
      t.destination = accounts[static_cast<std::size_t>(drawn.destination)].get();
      t.cents = drawn.cents;
      *t.source | t;
    }
    return Nodelete;
  }
  // A transfer back from its source: done.
  tact::allocation receive(transfer_msg&) {
    ++received_;
    if (++completed_ < transfers_.size()) return Nodelete;
    for (auto& a : *accounts_) *a | stop_;
    return Finished;
  }

 private:
  std::vector<transfer_msg> transfers_;  // all in flight at once: never resized
  std::vector<std::unique_ptr<account>>* accounts_ = nullptr;
  suite::savina::pseudo_random random_{suite::bank::seed};
  std::size_t completed_ = 0;
  std::uint64_t received_ = 0;
  stop_msg stop_;
};

tact::allocation account::receive(transfer_msg& t) {
  ++received_;
  if (t.at == transfer_msg::stage::acknowledged) {
    // Our own transfer, acknowledged by its destination: unlock, tell the
    // teller, and handle what arrived meanwhile, in order.
    locked_ = false;
    t.at = transfer_msg::stage::done;
    teller_ | t;
    while (!locked_ && !stash_.empty()) {
      transfer_msg& next = *stash_.front();
      stash_.pop_front();
      handle(next);
    }
  } else if (locked_) {
    stash_.push_back(&t);
  } else {
    handle(t);
  }
  return Nodelete;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::bank::params p = suite::bank::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<teller> boss;
  std::vector<std::unique_ptr<account>> bank;
  start_msg start;
  const double secs = suite::seconds([&] {
    boss = std::make_unique<teller>(system, p.transactions);
    bank.reserve(static_cast<std::size_t>(p.accounts));
    for (std::int64_t i = 0; i < p.accounts; ++i)
      bank.push_back(std::make_unique<account>(system, *boss));
    boss->open(bank);
    *boss | start;
    system.await_quiescence();
  });

  const std::vector<std::int64_t> expected = suite::bank::expected_balances(p);
  std::uint64_t delivered = boss->received();
  suite::check(boss->finished(), "the teller did not finish");
  for (std::size_t i = 0; i < bank.size(); ++i) {
    suite::check(bank[i]->finished(), "an account did not stop");
    suite::check(bank[i]->balance() == expected[i],
                 "account " + std::to_string(i) + " holds " + std::to_string(bank[i]->balance()) +
                     " cents, expected " + std::to_string(expected[i]));
    delivered += bank[i]->received();
  }
  const std::uint64_t messages = suite::bank::messages(p);
  suite::check(delivered == messages, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(messages));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "bank_transaction", "tact", secs, delivered);
}
