// Placing actors: a producer and its consumer on one queue, so their
// conversation stays on one worker; two independent counters started on
// different workers. docs/concepts.md quotes this file.
#include <cstdint>
#include <iostream>

#include <tact/tact.hpp>

struct item : tact::message {
  std::uint64_t value = 0;
};
struct go : tact::message {};

struct consumer : tact::actor {
  std::uint64_t sum = 0;
  tact::allocation receive(item& i) {
    sum += i.value;
    return Nodelete;
  }
};

struct producer : tact::actor {
  explicit producer(consumer& to) : to{to} {}
  consumer& to;
  item next;
  go again;
  tact::allocation receive(go&) {
    if (++next.value > 1000) return Delete;  // spawned: the system deletes it
    to | next;  // on the same queue: joins the batch in hand
    *this | again;
    return Nodelete;
  }
};

int main() {
  tact::actor_system system{{.workers = 2}};

  auto& sink = system.spawn_at<consumer>(tact::on_worker(0));
  auto& source = system.spawn_at<producer>(tact::next_to(sink), sink);
  const tact::location s = tact::where(sink), p = tact::where(source);
  std::cout << "consumer on queue " << s.queue << ", producer on queue " << p.queue
            << (s.queue == p.queue ? " (together)" : "") << '\n';

  auto& other = system.spawn_at<consumer>(tact::on_worker(1));
  std::cout << "another consumer starts on worker " << tact::where(other).worker << '\n';

  source | source.again;
  system.await_quiescence();
  std::cout << "sum " << sink.sum << '\n';
  sink | tact::delete_msg;
  other | tact::delete_msg;
  system.stop();
}
