// A behaviour that asks another actor and carries on with the answer;
// docs/ask.md quotes this file. main asks the shop; the shop's receive asks
// the price list, and waits on a fiber while its worker runs other actors.
#include <chrono>
#include <iostream>

#include <tact/tact.hpp>

using namespace std::chrono_literals;

struct price_of : tact::request<long> {  // answered with a price in cents
  int item = 0;
};

struct price_list : tact::actor {
  tact::allocation receive(price_of& m) {
    m.reply(m.item == 1 ? 250 : 1000);
    return Nodelete;
  }
};

struct order : tact::request<long> {  // answered with the total
  int item = 0;
  int count = 0;
};

struct shop : tact::actor {
  explicit shop(price_list& prices) : prices_{prices} {}
  tact::allocation receive(order& m) {
    price_of question;
    question.item = m.item;
    auto price = tact::ask(prices_, question, 500ms);  // waits here, without holding the worker
    m.reply(price ? *price * m.count : -1);             // and carries on with the answer
    return Nodelete;
  }
  price_list& prices_;
};

int main() {
  tact::actor_system system;
  price_list prices;
  shop s{prices};
  order o;
  o.item = 1;
  o.count = 3;
  std::cout << "total: " << tact::ask(s, o, 2s).value() << '\n';  // 750
  s | tact::finished_msg;
  prices | tact::finished_msg;
  system.stop();
}
