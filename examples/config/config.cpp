// Configuring a system: four workers, every send through the mailboxes,
// and a diagnostic handler of the program's own that counts the
// behaviours that threw instead of printing them. Afterwards the system's
// statistics say how many messages ran. docs/configuration.md quotes this
// file.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include <tact/tact.hpp>

struct job : tact::message {
  explicit job(int v) : value{v} {}
  int value;
};

// Refuses negative values by throwing; the system reports it and carries on.
struct checker : tact::actor {
  tact::allocation receive(job& m) {
    if (m.value < 0) throw std::domain_error{"negative job"};
    ++done;
    return Nodelete;
  }
  int done = 0;  // read once the system has stopped
};

int main() {
  // Called from worker threads, possibly at once: thread-safe, never throws.
  std::atomic<int> thrown{0}, other{0};
  auto count = [&](const tact::diagnostic& d) {
    (d.kind == tact::diagnostic_kind::behaviour_exception ? thrown : other).fetch_add(1);
  };
  tact::actor_system system{{.workers = 4, .local_batch = 0, .on_diagnostic = count}};

  checker check;
  job jobs[] = {job{1}, job{2}, job{-3}, job{4}, job{5}};
  for (job& j : jobs) check | j;
  check | tact::finished_msg;
  system.stop();

  // Exact once the system has stopped: the five jobs and the poison pill.
  const std::uint64_t processed = system.stats().total.messages_processed;
  std::printf("workers: %u\n", system.workers());
  std::printf("jobs done: %d, behaviours that threw: %d, other diagnostics: %d\n", check.done,
              thrown.load(), other.load());
  std::printf("messages processed: %llu\n", static_cast<unsigned long long>(processed));
  return system.workers() == 4 && check.done == 4 && thrown == 1 && other == 0 && processed == 6
             ? 0
             : 1;
}
