// Serving a system's statistics to Prometheus: a metrics_exposer on the
// loopback address, on a port it picks, while transactional actors
// commit, collide and roll back. Scrape the address it prints (with
// Prometheus, or `curl`) to see each counter per worker. It works for
// --seconds S (default 0: one round), then stops. docs/statistics.md
// quotes this file.
//
//   example-metrics-exposer [--seconds S]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <tact/metrics.hpp>
#include <tact/transactional.hpp>

namespace tx = tact::tx;

struct add {};

// A counter that refuses odd amounts: their handler throws and is rolled back.
tx::behaviour counter(long total) {
  return {[total](add, long amount) {
    if (amount % 2 != 0) throw std::invalid_argument{"odd amount"};
    tx::become(counter(total + amount));
  }};
}

int main(int argc, char** argv) {
  const double seconds =
      argc == 3 && std::strcmp(argv[1], "--seconds") == 0 ? std::atof(argv[2]) : 0;
  tact::actor_system system{{.on_rollback = [](const tx::rollback&) {}}};  // expected here
  tact::metrics_exposer exposer{system, {.address = "127.0.0.1:0"}};
  std::printf("serving http://127.0.0.1:%u/metrics\n", unsigned{exposer.port()});
  std::fflush(stdout);  // for whoever reads the address through a pipe

  const tx::actor_ref account = tx::spawn(system, counter(0));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>{seconds};
  do {
    for (long i = 0; i < 10'000; ++i) tx::send(account, add{}, i);
    system.await_quiescence();
  } while (std::chrono::steady_clock::now() < until);

  const tact::worker_stats total = system.stats().total;
  std::printf("committed %llu, rolled back %llu, collisions %llu\n",
              static_cast<unsigned long long>(total.tx_commits),
              static_cast<unsigned long long>(total.tx_rollbacks),
              static_cast<unsigned long long>(total.tx_collisions));
  return total.tx_commits == total.tx_rollbacks ? 0 : 1;  // as many even amounts as odd
}
