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
struct start_flood : disposable {};  // to the flood's source (flood.hpp)
struct shut_down : disposable {};    // the window has closed

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

// The flood (flood.hpp): its source splits it into shares, one per sender
// on the pool; each sender sends its reports to the dashboard in batches,
// and the next batch once the dashboard has counted one (a credit).
class flood_source;
struct flood_credit : disposable {};
struct flood_started : disposable {  // to the dashboard
  explicit flood_started(std::uint64_t count) : total{count} {}
  std::uint64_t total;  // reports to come
};
struct report : disposable {  // to the dashboard
  report(std::uint64_t sample, tact::handle<flood_credit> batch_done)
      : value{sample}, credit_to{batch_done} {}
  std::uint64_t value;
  tact::handle<flood_credit> credit_to;  // set on the last report of a batch
};
struct flood_share : disposable {  // the source to a sender
  flood_share(std::uint64_t from, std::uint64_t count, flood_source& boss)
      : first{from}, reports{count}, source{&boss} {}
  std::uint64_t first, reports;  // the values first, first + 1, ...
  flood_source* source;
};
struct flood_stop : disposable {};  // the source to a sender: send no more
struct share_sent : disposable {};  // a sender to the source: all counted

// The telemetry timer to the dashboard, 25 times a second: one message
// object, delivered again and again, so it is not disposable.
struct tick : tact::message {};
