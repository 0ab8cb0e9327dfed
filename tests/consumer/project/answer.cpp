// A program of a project that uses tact: main asks a classic actor and a
// transactional actor one question each. docs/getting-started.md quotes
// this file.
#include <chrono>
#include <iostream>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

struct multiply : tact::request<long> {  // answered with a long
  long a = 0;
  long b = 0;
};

struct multiplier : tact::actor {
  tact::allocation receive(multiply& m) {
    m.reply(m.a * m.b);
    return Nodelete;
  }
};

struct add {};

tx::behaviour adder() {
  return {[](const tx::actor_ref& customer, add, long a, long b) { tx::send(customer, a + b); }};
}

int main() {
  tact::actor_system system;

  multiplier m;
  multiply question;
  question.a = 6;
  question.b = 7;
  std::cout << "classic " << tact::ask(m, question, 30s).value() << '\n';
  m | tact::finished_msg;

  const tx::actor_ref sum = tx::spawn(system, adder());
  std::cout << "transactional " << tx::ask<long>(system, sum, 30s, add{}, 40L, 2L).value() << '\n';

  system.stop();
}
