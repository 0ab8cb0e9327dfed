// A connection taken from a pool for each database query, and given back
// whatever happens to the query: answered, failed, or never answered.
// unwind_protect runs the give-back once per query in each case.
// docs/widgets/unwind_protect.md quotes this file.
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;
namespace widgets = tact::widgets;

struct take {};
struct give_back {};
struct in_use {};

tx::behaviour pool(int used) {
  return {[used](take) { tx::become(pool(used + 1)); },
          [used](give_back) { tx::become(pool(used - 1)); },
          [used](const tx::actor_ref& customer, in_use) { tx::send(customer, used); }};
}

// Query 1 answers, query 2 throws, query 3 hangs for good.
tx::behaviour database() {
  return {[](const tx::actor_ref& customer, int query) {
    if (query == 2) throw std::runtime_error{"syntax error"};
    if (query == 1) tx::send(customer, std::string{"3 rows"});
  }};
}

// Runs a query for its customer: takes a connection, sends the query
// through `guarded`, and tells the customer what came of it.
tx::behaviour client(tx::actor_ref connections, tx::actor_ref guarded) {
  return {[connections, guarded](const tx::actor_ref& customer, int query) {
    tx::send(connections, take{});
    tx::send(guarded,
             widgets::beta(
                 [customer](const std::string& rows) { tx::send(customer, rows); },
                 [customer](const tx::failure&) { tx::send(customer, std::string{"failed"}); },
                 [customer](widgets::timed_out) { tx::send(customer, std::string{"timed out"}); }),
             query);
  }};
}

int main() {
  tact::actor_system system{{.on_rollback = [](const tx::rollback&) {}}};  // query 2 throws
  const tx::actor_ref connections = tx::spawn(system, pool(0), tx::mode::serialized);
  const tx::actor_ref guarded = widgets::unwind_protect(
      tx::spawn(system, database()), 1s, [connections] { tx::send(connections, give_back{}); });
  const tx::actor_ref app = tx::spawn(system, client(connections, guarded));

  std::string outcomes;
  for (int query = 1; query <= 3; ++query)
    outcomes += tx::ask<std::string>(system, app, 10s, query).value() + "; ";
  system.await_quiescence();  // the last give-back delivered
  const int used = tx::ask<int>(system, connections, 10s, in_use{}).value();
  std::cout << outcomes << used << " connection(s) in use\n";
  system.stop();
  return outcomes == "3 rows; failed; timed out; " && used == 0 ? 0 : 1;
}
