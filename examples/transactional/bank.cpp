// Transactional actors: an account that changes only by become, a handler
// that throws and leaves no trace, and replies sent to a customer passed as
// the first element. README.md quotes this file.
#include <cstdio>
#include <future>
#include <stdexcept>

#include <tact/transactional.hpp>

namespace tx = tact::tx;

struct deposit {};
struct withdraw {};
struct balance {};

// The account's state is what its behaviour captures; become replaces it.
tx::behaviour account(long cents) {
  return {
      [cents](const tx::actor_ref& customer, deposit, long amount) {
        tx::become(account(cents + amount));
        tx::send(customer, true);
      },
      [cents](const tx::actor_ref& customer, withdraw, long amount) {
        tx::send(customer, true);  // staged: discarded by the throw below
        if (amount > cents) throw std::runtime_error{"insufficient funds"};
        tx::become(account(cents - amount));
      },
      [cents](const tx::actor_ref& customer, balance) { tx::send(customer, cents); },
  };
}

int main() {
  tact::actor_system system{{.on_rollback = [](const tx::rollback& r) {
    std::printf("rolled back a %s message\n", r.msg.describe().c_str());
  }}};
  const tx::actor_ref acct = tx::spawn(system, account(0), tx::mode::serialized);
  const tx::actor_ref ignore;  // replies to an empty reference are dropped
  tx::send(acct, ignore, deposit{}, 100L);
  tx::send(acct, ignore, withdraw{}, 500L);  // throws: no reply, no change
  system.await_quiescence();

  std::promise<long> answer;
  tx::send(acct, tx::spawn(system, {[&answer](long cents) { answer.set_value(cents); }}),
           balance{});
  std::printf("balance: %ld\n", answer.get_future().get());  // balance: 100
}
