// A pipeline of actors bound to the calling thread: main runs them with
// run_until_quiescent(), with no hand-off between threads. A classic parser
// reads order lines and passes each quantity to a transactional tally,
// which answers a customer bound to the same thread. docs/sponsors.md
// quotes this file.
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

namespace tx = tact::tx;

struct line : tact::message {
  explicit line(std::string t) : text{std::move(t)} {}
  std::string text;  // "<quantity> <item>"
};

struct add {};
struct total {};

// The tally's state is what its behaviour captures; become replaces it.
tx::behaviour counter(long items) {
  return {[items](add, long quantity) { tx::become(counter(items + quantity)); },
          [items](const tx::actor_ref& customer, total) { tx::send(customer, items); }};
}

struct parser : tact::actor {
  explicit parser(tx::actor_ref next) : next_{std::move(next)} {}
  tact::allocation receive(line& m) {
    ran_on = std::this_thread::get_id();
    long quantity = 0;
    std::istringstream{m.text} >> quantity;
    tx::send(next_, add{}, quantity);
    return Nodelete;
  }
  std::thread::id ran_on;

 private:
  tx::actor_ref next_;
};

int main() {
  tact::actor_system system;
  tact::sponsor here{system};                // driven by this thread
  auto tally = tx::spawn(here, counter(0));  // transactional: tx::spawn(sponsor, ...)
  auto& parse = here.spawn<parser>(tally);   // classic: sponsor.spawn<T>(args...)

  line input[] = {line{"3 apples"}, line{"4 pears"}, line{"5 plums"}};
  for (line& l : input) parse | l;
  here.run_until_quiescent();  // runs them here, until all is done

  long items = -1;
  auto customer = tx::spawn(here, {[&items](long n) { items = n; }});
  tx::send(tally, customer, total{});
  here.run_until_quiescent();

  const bool here_only = parse.ran_on == std::this_thread::get_id();
  std::printf("%ld items, counted on the main thread: %s\n", items, here_only ? "yes" : "no");
  parse | tact::delete_msg;
  here.run_until_quiescent();
  return items == 12 && here_only ? 0 : 1;
}
