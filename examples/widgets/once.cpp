// A start button pressed many times, from several threads at once: a once
// gate in front of the motor lets the first press through and drops the
// others, so the motor starts exactly once. docs/widgets/once.md quotes
// this file.
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

struct start {};
struct starts_so_far {};

// The motor counts its starts; starting one that runs would be a fault.
tx::behaviour motor(int starts) {
  return {[starts](start) { tx::become(motor(starts + 1)); },
          [starts](const tx::actor_ref& customer, starts_so_far) { tx::send(customer, starts); }};
}

int main() {
  tact::actor_system system;
  const tx::actor_ref m = tx::spawn(system, motor(0), tx::mode::serialized);
  const tx::actor_ref button = tact::widgets::once(m);

  // Four impatient hands press the button 25 times each.
  std::vector<std::thread> hands;
  for (int h = 0; h < 4; ++h)
    hands.emplace_back([button] {
      for (int press = 0; press < 25; ++press) tx::send(button, start{});
    });
  for (std::thread& hand : hands) hand.join();
  system.await_quiescence();  // every press delivered: passed on or dropped

  const int starts = tx::ask<int>(system, m, 10s, starts_so_far{}).value();
  std::cout << "100 presses, the motor started " << starts << " time(s)\n";
  system.stop();
  return starts == 1 ? 0 : 1;
}
