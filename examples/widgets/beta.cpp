// A checkout that needs two answers, a unit price and a shipping fee, and
// adds them: each answer is taken by a beta, a one-shot continuation whose
// captures carry what the next step needs. docs/widgets/beta.md quotes
// this file.
#include <chrono>
#include <iostream>
#include <stdexcept>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace widgets = tact::widgets;

struct price_of {};
struct shipping_for {};
struct total_for {};

// Prices in cents; an item the list does not know makes it throw.
tx::behaviour price_list() {
  return {[](const tx::actor_ref& customer, price_of, int item) {
    if (item != 1) throw std::out_of_range{"no such item"};
    tx::send(customer, 250L);
  }};
}
tx::behaviour shipping() {
  return {[](const tx::actor_ref& customer, shipping_for, int count) {
    tx::send(customer, count > 10 ? 0L : 500L);
  }};
}

// total = unit price * count + shipping. The first continuation carries
// the customer and the count; the second, the goods' price as well.
tx::behaviour checkout(tx::actor_ref prices, tx::actor_ref carrier) {
  return {[prices, carrier](const tx::actor_ref& customer, total_for, int item, int count) {
    tx::send(prices,
             widgets::beta(
                 [customer, carrier, count](long unit) {
                   const long goods = unit * count;
                   tx::send(carrier, widgets::beta([customer, goods](long fee) {
                              tx::send(customer, goods + fee);
                            }),
                            shipping_for{}, count);
                 },
                 [customer](const tx::failure& f) { tx::send(customer, f); }),  // pass it on
             price_of{}, item);
  }};
}

int main() {
  tact::actor_system system{
      {.on_rollback = [](const tx::rollback&) {}}};  // the unknown item throws
  const tx::actor_ref shop =
      tx::spawn(system, checkout(tx::spawn(system, price_list()), tx::spawn(system, shipping())));

  const long total = tx::ask<long>(system, shop, 10s, total_for{}, 1, 3).value();
  std::cout << "3 of item 1: " << total << " cents\n";  // 3 * 250 + 500
  const auto unknown = tx::ask<long>(system, shop, 10s, total_for{}, 7, 1);
  const bool failed = !unknown && unknown.error() == tact::ask_error::failed;
  std::cout << "item 7: " << (failed ? "failed" : "answered") << '\n';
  system.stop();
  return total == 1250 && failed ? 0 : 1;
}
