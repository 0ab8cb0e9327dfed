// host-cross_core: how long this host takes to move a cache line from one
// processing unit to another and back, printed by the suite's runner
// beside the load. Two threads, each pinned to one of the first two
// processing units the process may use, hand a flag back and forth; the
// best of a few runs is the round trip. Every send between two workers
// pays some of this (the line of the queue it posts to, the lock, the
// worker it wakes), so the same engine's 2-worker times move with it from
// one host, or one day, to the next; a table that prints it can be
// compared with another.
//
// Prints `round_trip_ns N`, or nothing (exit status 1) where fewer than
// two processing units are available.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

constexpr int rounds = 100'000;
constexpr int attempts = 3;

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// The ball: 1 while the second thread has to send it back.
alignas(64) std::atomic<int> ball{0};

double round_trip_ns(int here, int there) {
  std::thread partner{[there] {
    pin(there);
    for (int i = 0; i < rounds; ++i) {
      while (ball.load(std::memory_order_acquire) != 1) {
      }
      ball.store(0, std::memory_order_release);
    }
  }};
  pin(here);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) {
    ball.store(1, std::memory_order_release);
    while (ball.load(std::memory_order_acquire) != 0) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  partner.join();
  return std::chrono::duration<double, std::nano>(end - start).count() / rounds;
}

}  // namespace

int main() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  int units[2];
  int found = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) units[found++] = cpu;
  if (found < 2) return 1;
  double best = 0;
  for (int i = 0; i < attempts; ++i) {
    const double t = round_trip_ns(units[0], units[1]);
    if (i == 0 || t < best) best = t;
  }
  std::printf("round_trip_ns %.0f\n", best);
  return 0;
}
