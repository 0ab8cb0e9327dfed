// Two replicas of an address book: a lookup goes to both, and the first
// answer wins. The primary is in a long pause, so the backup answers; a
// name neither knows fails on both, and only then does the failure reach
// the caller. docs/widgets/race.md quotes this file.
#include <chrono>
#include <iostream>
#include <map>
#include <string>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

using book = std::map<std::string, std::string>;

// Answers `name`'s address after `pause`, tagged with the replica's name;
// a name not in the book makes it throw at once (std::map::at).
tx::behaviour replica(std::string self_name, book addresses, std::chrono::seconds pause) {
  return {[=](const tx::actor_ref& customer, const std::string& name) {
    std::string answer = addresses.at(name) + " (from " + self_name + ")";
    if (pause == 0s)
      tx::send(customer, std::move(answer));
    else
      tx::send_after(pause, customer, std::move(answer));
  }};
}

int main() {
  tact::actor_system system{{.on_rollback = [](const tx::rollback&) {}}};  // unknown names throw
  const book addresses{{"ada", "12 Analytical Row"}, {"alan", "1 Bletchley Lane"}};
  const tx::actor_ref primary = tx::spawn(system, replica("primary", addresses, 1h));
  const tx::actor_ref backup = tx::spawn(system, replica("backup", addresses, 0s));
  const tx::actor_ref lookup = tact::widgets::race({primary, backup});

  const std::string ada = tx::ask<std::string>(system, lookup, 10s, std::string{"ada"}).value();
  std::cout << "ada: " << ada << '\n';
  const auto eve = tx::ask<std::string>(system, lookup, 10s, std::string{"eve"});
  const bool failed = !eve && eve.error() == tact::ask_error::failed;
  std::cout << "eve: " << (failed ? "unknown to both" : "found") << '\n';
  system.stop();  // ends the primary's pending answers
  return ada == "12 Analytical Row (from backup)" && failed ? 0 : 1;
}
