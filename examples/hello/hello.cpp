// The smallest complete tact program: a classic actor with two behaviours,
// messages sent from main, and a poison pill so stop() can return.
#include <iostream>
#include <string>

#include <tact/tact.hpp>

struct greeting : tact::message {
  std::string text;
};
struct number : tact::message {
  int value = 0;
};

struct printer : tact::actor {
  tact::allocation receive(greeting& m) {
    std::cout << "greeting: " << m.text << '\n';
    return Nodelete;  // keep receiving
  }
  tact::allocation receive(number& m) {
    std::cout << "number: " << m.value << '\n';
    return Nodelete;
  }
};

int main() {
  tact::actor_system system;  // one worker per processing unit
  greeting hello;
  hello.text = "Hello, actors";
  number answer;
  answer.value = 42;

  printer p;                   // lives on main's stack, joins `system`
  p | hello | answer | answer; // cascaded sends, delivered in this order
  p | tact::finished_msg;      // after those: p is finished
  system.stop();               // waits until every actor has finished
}
