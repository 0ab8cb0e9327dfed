// A classic actor with two behaviours, sent to from main; quoted in README.
#include <iostream>
#include <string>
#include <tact/tact.hpp>

struct greeting : tact::message { std::string text; };
struct number : tact::message { int value = 0; };

struct printer : tact::actor {
  tact::allocation receive(greeting& m) { std::cout << m.text << '\n'; return Nodelete; }
  tact::allocation receive(number& m) { std::cout << m.value << '\n'; return Nodelete; }
};

int main() {
  tact::actor_system system;           // one worker per processing unit
  greeting hello;  hello.text = "Hello, actors";
  number answer;   answer.value = 42;
  printer p;                           // joins `system`
  p | hello | answer | tact::finished_msg;  // delivered in this order
  system.stop();                       // returns once every actor has finished
}
