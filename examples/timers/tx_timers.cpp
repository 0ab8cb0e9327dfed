// Transactional timers: a monitor samples a sensor every 100 ms until the
// readings add up to a goal, and gives up if that takes too long. Its
// timers start when the handler that starts them commits, and it cancels
// them from on_commit actions, so that a handler that rolled back would
// neither start nor stop anything. docs/timers.md quotes this file.
#include <chrono>
#include <cstdio>
#include <future>

#include <tact/transactional.hpp>

using namespace std::chrono_literals;
namespace tx = tact::tx;

struct start {};
struct sample {};
struct reading {};
struct give_up {};

// A simulated gauge: each sample reads one more than the last.
tx::behaviour sensor(const tx::actor_ref& monitor, long next) {
  return {[monitor, next](sample) {
    tx::send(monitor, reading{}, next);
    tx::become(sensor(monitor, next + 1));
  }};
}

// Done: the timers are cancelled, but a reading sent before may still come.
tx::behaviour done() {
  return {[](reading, long) {}, [](give_up) {}};
}

tx::behaviour watching(const tx::actor_ref& customer, long sum, long goal, tact::timer deadline,
                       tact::timer sampling) {
  return {[=](reading, long value) {
            if (sum + value < goal) {
              tx::become(watching(customer, sum + value, goal, deadline, sampling));
              return;
            }
            tx::on_commit([t = deadline]() mutable { t.cancel(); });
            tx::on_commit([t = sampling]() mutable { t.cancel(); });
            tx::send(customer, sum + value);
            tx::become(done());
          },
          [=](give_up) {
            tx::on_commit([t = sampling]() mutable { t.cancel(); });
            tx::send(customer, -1L);
            tx::become(done());
          }};
}

tx::behaviour monitor(long goal) {
  return {[goal](const tx::actor_ref& customer, start, const tx::actor_ref& sampler) {
    tact::timer deadline = tx::send_after(60s, tx::self(), give_up{});
    auto t = tx::send_every(100ms, sampler, sample{});
    tx::become(watching(customer, 0, goal, deadline, t));
  }};
}

int main() {
  tact::actor_system system;
  const tx::actor_ref watch = tx::spawn(system, monitor(10), tx::mode::serialized);
  const tx::actor_ref gauge = tx::spawn(system, sensor(watch, 1), tx::mode::serialized);

  std::promise<long> total;
  tx::send(watch, tx::spawn(system, {[&total](long sum) { total.set_value(sum); }}), start{},
           gauge);
  std::future<long> result = total.get_future();
  // The goal takes four samples, 400 ms; the wait is generous for a loaded machine.
  const long sum = result.wait_for(120s) == std::future_status::ready ? result.get() : -2;
  std::printf("readings 1 + 2 + 3 + 4 reached the goal: %ld\n", sum);
  system.stop();
  return sum == 10 ? 0 : 1;
}
