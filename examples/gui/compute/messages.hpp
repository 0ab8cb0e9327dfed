// What the window, the workers and the dashboard tell each other. Every
// message but the tick is made with `new` and sent once; the executor
// deletes it after its delivery.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <tact/tact.hpp>

struct disposable : tact::message {
  disposable() : tact::message{tact::allocation::Delete} {}
};

// The window to the coordinator: a slider moved, a button pressed.
struct set_limit : disposable {
  explicit set_limit(std::uint64_t limit) : n{limit} {}
  std::uint64_t n;  // count the primes below n
};
struct set_chunks : disposable {
  explicit set_chunks(std::uint64_t count) : chunks{count} {}
  std::uint64_t chunks;
};
struct start : disposable {};
struct cancel : disposable {};
struct shut_down : disposable {};  // the window has closed

// The coordinator and its counters.
class coordinator;
class counter;
using prime_table = std::shared_ptr<const std::vector<std::uint32_t>>;
struct chunk : disposable {
  chunk(std::uint64_t id, std::uint64_t from, std::uint64_t to, prime_table primes,
        coordinator& boss)
      : job{id}, lo{from}, hi{to}, base{std::move(primes)}, reply_to{&boss} {}
  std::uint64_t job, lo, hi;  // count the primes in [lo, hi)
  prime_table base;           // every prime up to sqrt(hi)
  coordinator* reply_to;
};
struct chunk_counted : disposable {
  chunk_counted(std::uint64_t id, std::uint64_t count, counter& who)
      : job{id}, primes{count}, from{&who} {}
  std::uint64_t job, primes;
  counter* from;
};

// The coordinator to the dashboard.
struct settings : disposable {
  settings(std::uint64_t limit, std::uint64_t count) : n{limit}, chunks{count} {}
  std::uint64_t n, chunks;
};
struct started : disposable {
  explicit started(std::uint64_t id) : job{id} {}
  std::uint64_t job;
};
struct progress : disposable {
  progress(std::uint64_t id, std::uint64_t finished) : job{id}, done{finished} {}
  std::uint64_t job, done;  // chunks done so far
};
struct counted : disposable {
  counted(std::uint64_t id, std::uint64_t primes_found, double took)
      : job{id}, primes{primes_found}, seconds{took} {}
  std::uint64_t job, primes;
  double seconds;
};
struct cancelled : disposable {
  explicit cancelled(std::uint64_t id) : job{id} {}
  std::uint64_t job;
};

// The telemetry timer to the dashboard, 25 times a second: one message
// object, delivered again and again, so it is not disposable.
struct tick : tact::message {};
