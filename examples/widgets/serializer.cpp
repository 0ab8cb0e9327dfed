// A serializer in front of a service that needs several messages per
// request: the requests of many clients reach it one at a time, in order,
// and each answer goes back to the client that asked.
// docs/widgets/serializer.md quotes this file.
#include <chrono>
#include <iostream>
#include <string>

#include <tact/transactional.hpp>
#include <tact/widgets.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

struct write_line {
  std::string text;
};
struct flushed {};

// A log file: a write is two steps (write, then flush), and a second write
// arriving between them would interleave. Unguarded, it would have to
// refuse or queue that write itself; behind a serializer it never sees one.
tx::behaviour log_file(int lines);
tx::behaviour flushing(int lines, tx::actor_ref customer) {
  return {[lines, customer](flushed) {
    tx::send(customer, lines);  // the answer: lines written so far
    tx::become(log_file(lines));
  }};
}
tx::behaviour log_file(int lines) {
  return {[lines](const tx::actor_ref& customer, const write_line& w) {
    tx::on_commit([text = w.text] { std::cout << text << '\n'; });  // once, if it commits
    tx::send(tx::self(), flushed{});  // the second step, as a message
    tx::become(flushing(lines + 1, customer));
  }};
}

int main() {
  tact::actor_system system;
  const tx::actor_ref file = tact::widgets::serializer(tx::spawn(system, log_file(0)));

  // Three clients write at once; each gets back the count after its line
  // (the service is the only one printing, so the lines never mix).
  for (int i = 0; i < 3; ++i) {
    const tx::actor_ref client = tx::spawn(system, {[](int /*lines so far*/) {}});
    tx::send(file, client, write_line{"line from client " + std::to_string(i)});
  }
  // From main, ask through the same serializer: it waits its turn, after
  // the three lines sent before it.
  const int lines = tx::ask<int>(system, file, 10s, write_line{"last line"}).value();
  std::cout << lines << " lines\n";
  system.stop();
  return lines == 4 ? 0 : 1;
}
