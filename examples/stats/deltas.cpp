// Snapshots and differences of a system's statistics: what each of two
// phases of work cost, in all, per worker and per second, found by
// subtracting a snapshot taken before the phase from one taken after it
// (the engine's counters are never reset). docs/statistics.md quotes this
// file.
#include <cstdint>
#include <cstdio>

#include <tact/tact.hpp>

// Goes round a ring of actors until it has made its hops.
struct token : tact::message {
  std::uint64_t hops_left = 0;
};

struct node : tact::actor {
  tact::allocation receive(token& t) {
    if (t.hops_left > 0) {
      --t.hops_left;
      *next | t;
    }
    return Nodelete;
  }
  node* next = nullptr;
};

// One phase: a token sent round the ring for `hops` hops. Returns what
// happened in the system meanwhile.
tact::system_stats phase(tact::actor_system& system, node& first, std::uint64_t hops) {
  const tact::system_stats before = system.stats();
  token t;
  t.hops_left = hops;
  first | t;
  system.await_quiescence();
  return system.stats() - before;
}

void print(const char* name, const tact::system_stats& d) {
  std::printf("%s: %llu messages in %.3f s\n", name,
              static_cast<unsigned long long>(d.total.messages_processed), d.interval().count());
  for (std::size_t w = 0; w < d.workers.size(); ++w)
    std::printf("  worker %zu: %.0f messages/s, %llu queues stolen; now %s\n", w,
                d.per_second(d.workers[w].messages_processed),
                static_cast<unsigned long long>(d.workers[w].steals),
                d.load[w].parked ? "parked" : "running");
}

int main() {
  tact::actor_system system{{.workers = 2}};
  node ring[8];
  for (int i = 0; i < 8; ++i) ring[i].next = &ring[(i + 1) % 8];

  const tact::system_stats warm_up = phase(system, ring[0], 1'000);
  const tact::system_stats run = phase(system, ring[0], 100'000);
  print("warm-up", warm_up);
  print("run", run);

  for (node& n : ring) n | tact::finished_msg;
  system.stop();
  // Each phase ran its hops and the send from main, all on the workers,
  // and left nothing queued.
  const auto exact = [](const tact::system_stats& d, std::uint64_t hops) {
    std::uint64_t on_workers = 0;
    for (const tact::worker_stats& w : d.workers) on_workers += w.messages_processed;
    return d.total.messages_processed == hops + 1 && on_workers == hops + 1 && d.queued == 0;
  };
  return exact(warm_up, 1'000) && exact(run, 100'000) ? 0 : 1;
}
