// A service that answers whoever asks, without knowing their types: each
// question carries a tact::handle to its asker. docs/concepts.md quotes
// this file.
#include <chrono>
#include <iostream>
#include <string>

#include <tact/tact.hpp>

using namespace std::chrono_literals;

struct price : tact::message {
  std::string item;
  double amount = 0;
};

struct quote_request : tact::message {
  std::string item;
  tact::handle<price> reply_to;  // any actor that receives price&
};

struct price_list : tact::actor {
  price answer;  // reused: the asker is done with it before the next question
  tact::allocation receive(quote_request& q) {
    answer.item = q.item;
    answer.amount = q.item == "tea" ? 2.5 : 4.0;
    q.reply_to | answer;
    return Nodelete;
  }
};

// Two unrelated asker types; the service knows neither.
struct shopper : tact::actor {
  tact::allocation receive(price& p) {
    std::cout << "shopper: " << p.item << " costs " << p.amount << '\n';
    return Nodelete;
  }
};
struct auditor : tact::actor {
  double total = 0;
  tact::allocation receive(price& p) {
    total += p.amount;
    return Nodelete;
  }
};

// Asked from main through a handle that names the request type.
struct count_items : tact::request<int> {};
struct stock : tact::actor {
  tact::allocation receive(count_items& q) {
    q.reply(12);
    return Nodelete;
  }
};

int main() {
  tact::actor_system system;
  price_list prices;
  shopper s;
  auditor a;

  quote_request tea, coffee;
  tea.item = "tea";
  tea.reply_to = s;
  coffee.item = "coffee";
  coffee.reply_to = a;
  tact::handle<quote_request> service = prices;  // what the askers need to know
  service | tea;
  system.await_quiescence();
  service | coffee;
  system.await_quiescence();
  std::cout << "auditor: total " << a.total << '\n';

  stock shelf;
  tact::handle<count_items> inventory = shelf;
  std::cout << "stock: " << tact::ask(inventory, count_items{}, 10s).value() << " items\n";

  prices | tact::finished_msg;
  s | tact::finished_msg;
  a | tact::finished_msg;
  shelf | tact::finished_msg;
  system.stop();
}
