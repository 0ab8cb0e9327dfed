// A dashboard that reads weather stations with a deadline: a station that
// answers is shown, one whose link is down is shown as silent after one
// second instead of freezing the dashboard. docs/widgets/timeout.md quotes
// this file.
#include <chrono>
#include <iostream>
#include <string>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace widgets = tact::widgets;

struct read_temperature {};
struct refresh {};

// A station answers its customer with whole degrees Celsius.
tx::behaviour station(int celsius) {
  return {
      [celsius](const tx::actor_ref& customer, read_temperature) { tx::send(customer, celsius); }};
}
// A station whose link is down takes the request and never answers.
tx::behaviour unreachable() {
  return {[](const tx::actor_ref&, read_temperature) {}};
}

// Asked to refresh from a station, the dashboard hands the station a
// timeout gate in its own place and answers with what it then shows.
tx::behaviour dashboard();
tx::behaviour refreshing(tx::actor_ref customer) {
  return {[customer](int celsius) {
            tx::send(customer, std::to_string(celsius) + " C");
            tx::become(dashboard());
          },
          [customer](widgets::timed_out) {
            tx::send(customer, std::string{"no reading"});
            tx::become(dashboard());
          }};
}
tx::behaviour dashboard() {
  return {[](const tx::actor_ref& customer, refresh, const tx::actor_ref& from) {
    tx::send(from, widgets::timeout(tx::self(), 1s), read_temperature{});
    tx::become(refreshing(customer));
  }};
}

int main() {
  tact::actor_system system;
  const tx::actor_ref roof = tx::spawn(system, station(21));
  const tx::actor_ref cellar = tx::spawn(system, unreachable());
  const tx::actor_ref board = tx::spawn(system, dashboard(), tx::mode::serialized);

  const auto started = std::chrono::steady_clock::now();
  const std::string on_roof = tx::ask<std::string>(system, board, 10s, refresh{}, roof).value();
  const std::string in_cellar = tx::ask<std::string>(system, board, 10s, refresh{}, cellar).value();
  const bool waited = std::chrono::steady_clock::now() - started >= 1s;  // never early

  std::cout << "roof: " << on_roof << "\ncellar: " << in_cellar << '\n';
  system.stop();
  return on_roof == "21 C" && in_cellar == "no reading" && waited ? 0 : 1;
}
