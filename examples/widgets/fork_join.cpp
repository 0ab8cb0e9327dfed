// A price comparison: the same question goes to three shops, and the
// answers come back as one vector in the order of the shops, however fast
// each shop is. A shop that does not stock the item fails the whole
// comparison. docs/widgets/fork_join.md quotes this file.
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
  system.stop();
  return kettle == std::vector<long>{3499, 2899, 3150} && failed ? 0 : 1;
}
