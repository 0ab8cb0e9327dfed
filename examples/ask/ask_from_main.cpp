// Asking actors from main: a classic actor answers a tact::request<R>, a
// transactional one answers the customer tx::ask puts first. The result
// holds the reply or says why there is none. docs/ask.md quotes this file.
#include <chrono>
#include <iostream>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

struct deposit : tact::message {
  long amount = 0;
};
struct get_balance : tact::request<long> {};  // answered with a long

struct account : tact::actor {
  long balance = 0;
  tact::allocation receive(deposit& m) {
    balance += m.amount;
    return Nodelete;
  }
  tact::allocation receive(get_balance& m) {
    m.reply(balance);
    return Nodelete;
  }
};

struct get {};
struct ignore {};

tx::behaviour counter(int n) {
  return {[n](const tx::actor_ref& customer, get) { tx::send(customer, n); },
          [](const tx::actor_ref&, ignore) {}};  // never answers
}

int main() {
  tact::actor_system system;

  account acct;
  deposit d;
  d.amount = 42;
  acct | d;
  // Sent after the deposit, so answered after it.
  if (auto balance = tact::ask(acct, get_balance{}, 1s)) std::cout << "balance " << *balance << '\n';

  const tx::actor_ref c = tx::spawn(system, counter(7));
  std::cout << "count " << tx::ask<int>(system, c, 1s, get{}).value() << '\n';

  // No answer: the error is in the result; value() would throw.
  auto nothing = tx::ask<int>(system, c, 10ms, ignore{});
  if (!nothing && nothing.error() == tact::ask_error::no_reply) std::cout << "no reply\n";

  acct | tact::finished_msg;
  system.stop();
}
