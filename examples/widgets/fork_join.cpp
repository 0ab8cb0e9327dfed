// A price comparison: the same question goes to three shops, and the
// answers come back as one vector in the order of the shops, however fast
// each shop is. A shop that does not stock the item fails the whole
// comparison. A basket then joins two different questions to two shops
// and adds up the answers. docs/widgets/fork_join.md quotes this file.
#include <chrono>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

using stock = std::map<std::string, long>;  // item -> price in cents

// Answers with the item's price after `delay`; throws if it has none.
tx::behaviour shop(stock prices, std::chrono::milliseconds delay) {
  return {[prices, delay](const tx::actor_ref& customer, const std::string& item) {
    const auto it = prices.find(item);
    if (it == prices.end()) throw std::out_of_range{"not in stock: " + item};
    tx::send_after(delay, customer, it->second);
  }};
}

struct basket {};

// A toaster from the first shop and a kettle from the third: two different
// requests whose replies belong together. join hands out one customer per
// request, and a beta takes the vector of replies and adds it up.
tx::behaviour basket_total(std::vector<tx::actor_ref> shops) {
  return {[shops](const tx::actor_ref& customer, basket) {
    const tx::actor_ref add_up = tact::widgets::beta([customer](const std::vector<long>& prices) {
      tx::send(customer, prices[0] + prices[1]);
    });
    const std::vector<tx::actor_ref> parts = tact::widgets::join<long>(add_up, 2);
    tx::send(shops[0], parts[0], std::string{"toaster"});
    tx::send(shops[2], parts[1], std::string{"kettle"});
    // add_up gets {toaster, kettle}: the order of parts, although the
    // kettle's price (no delay) arrives first
  }};
}

int main() {
  tact::actor_system system{
      {.on_rollback = [](const tx::rollback&) {}}};  // the missing item throws
  // The first shop is the slowest: its answer arrives last.
  const std::vector<tx::actor_ref> shops{
      tx::spawn(system, shop({{"kettle", 3499}, {"toaster", 2999}}, 30ms)),
      tx::spawn(system, shop({{"kettle", 2899}, {"toaster", 3199}}, 15ms)),
      tx::spawn(system, shop({{"kettle", 3150}}, 0ms)),
  };
  const tx::actor_ref compare = tact::widgets::fork_join<long>(shops);

  const std::vector<long> kettle =
      tx::ask<std::vector<long>>(system, compare, 10s, std::string{"kettle"}).value();
  std::cout << "kettle:";
  for (long cents : kettle) std::cout << ' ' << cents;
  std::cout << '\n';

  const auto toaster = tx::ask<std::vector<long>>(system, compare, 10s, std::string{"toaster"});
  const bool failed = !toaster && toaster.error() == tact::ask_error::failed;
  std::cout << "toaster: " << (failed ? "not at every shop" : "compared") << '\n';

  const tx::actor_ref till = tx::spawn(system, basket_total(shops));
  const long total = tx::ask<long>(system, till, 10s, basket{}).value();
  std::cout << "toaster and kettle: " << total << '\n';  // 2999 + 3150
  system.stop();
  return kettle == std::vector<long>{3499, 2899, 3150} && failed && total == 6149 ? 0 : 1;
}
