// Messages made per send: tact::send_new makes, sends and frees one in a
// call, and tact::payload lets a plain struct be a message, so it can be
// written with designated initializers. docs/concepts.md quotes this file.
#include <iostream>
#include <string>

#include <tact/tact.hpp>

struct order {  // a plain struct: no base, brace-initialised
  std::string dish;
  int count = 1;
};

struct cancel : tact::message {  // an ordinary message with a constructor
  explicit cancel(std::string why) : why{std::move(why)} {}
  std::string why;
};

struct kitchen : tact::actor {
  tact::allocation receive(tact::payload<order>& o) {  // o.dish, o.count
    std::cout << o.count << " x " << o.dish << '\n';
    return Nodelete;
  }
  tact::allocation receive(cancel& c) {
    std::cout << "cancelled: " << c.why << '\n';
    return Nodelete;
  }
};

struct waiter : tact::actor {
  explicit waiter(kitchen& k) : k{k} { closing.allow_unsent(); }  // may never be needed
  kitchen& k;
  cancel closing{"closing time"};
  tact::allocation receive(tact::payload<order>& o) {
    tact::send_new(k, order{.dish = o.dish, .count = o.count * 2});  // a double portion
    return Nodelete;
  }
};

int main() {
  tact::actor_system system;
  kitchen k;
  waiter w{k};
  tact::send_new(k, order{.dish = "soup"});
  tact::send_new<order>(w, "pie", 2);  // order{"pie", 2}
  tact::send_new<cancel>(k, "no more pie");
  system.await_quiescence();
  w | tact::finished_msg;
  k | tact::finished_msg;
  system.stop();
}
