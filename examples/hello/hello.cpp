// A classic actor receiving from main; README.md quotes this file.
#include <iostream>
#include <string>

#include <tact/tact.hpp>

struct greeting : tact::message {
  std::string text;
};

struct printer : tact::actor {
  tact::allocation receive(greeting& m) {  // one receive per message type
    std::cout << m.text << '\n';
    return Nodelete;  // keep receiving
  }
};

int main() {
  tact::actor_system system;  // one worker per processing unit
  greeting hello, bye;
  hello.text = "Hello, actors";
  bye.text = "Goodbye";
  printer p;                             // joins `system`
  p | hello | bye | tact::finished_msg;  // delivered in this order
  system.stop();                         // returns once every actor has finished
}
