#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tact/actor_system.hpp>
#include <tact/config.hpp>
#include <tact/diagnostic.hpp>

namespace tact::test {

// Waits until `ready()`, checking every 100 microseconds, for `patience`
// at most: a deadlock guard, not a time limit (it fails only if the
// engine lost the event it waits for).
template <class Ready>
bool eventually(Ready ready, std::chrono::seconds patience = std::chrono::seconds{60}) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::microseconds{100});
  }
  return true;
}

// Keeps the calling thread busy for `d` of wall time: a behaviour that
// takes at least that long, however fast the machine.
inline void busy_for(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Multiplies the sizes of stress and soak loops: TACT_STRESS_SCALE=0.25 under
// ThreadSanitizer (several times slower), larger values for longer soaks.
inline std::uint64_t scaled(std::uint64_t count) {
  const char* text = std::getenv("TACT_STRESS_SCALE");
  const double scale = text != nullptr ? std::strtod(text, nullptr) : 1.0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(count) * scale));
}

// Where a test's random choices start: TACT_TEST_SEED if set, to replay a
// failure, else a fresh number. Tests show it on failure (INFO), and
// derive every generator from it, so a run replays from it alone.
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* text = std::getenv("TACT_TEST_SEED")) return std::strtoull(text, nullptr, 0);
    return (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  }();
  return seed;
}

// A generator for one part of a test: the run's seed mixed with `stream`,
// so parts (threads, actors) draw independent sequences (splitmix64).
inline std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Rate of injected faults (behaviours that throw), per message: TACT_FAULT_RATE
// if set, else `otherwise`.
inline double fault_rate(double otherwise) {
  const char* text = std::getenv("TACT_FAULT_RATE");
  return text != nullptr ? std::strtod(text, nullptr) : otherwise;
}

// For long runs under other shapes (tests/soak): TACT_TEST_WORKERS,
// TACT_TEST_QUEUES and TACT_TEST_QUEUE_FLOOR, where set, replace the
// workers, queues and copy queue floor of `config`. Only for tests that hold
// for any shape (the soak keeps queues >= workers).
inline system_config configured(system_config config) {
  const auto number = [](const char* name) -> std::uint64_t {
    const char* text = std::getenv(name);
    return text != nullptr ? std::strtoull(text, nullptr, 0) : 0;
  };
  if (const std::uint64_t n = number("TACT_TEST_WORKERS")) config.workers = static_cast<std::uint32_t>(n);
  if (const std::uint64_t n = number("TACT_TEST_QUEUES")) config.queues = static_cast<std::uint32_t>(n);
  if (const std::uint64_t n = number("TACT_TEST_QUEUE_FLOOR"))
    config.copy_queue_floor = static_cast<std::uint32_t>(n);
  return config;
}

// For long runs: appends the messages `system` processed to the file that
// TACT_TEST_FIGURES names, one number per line, which the soak sums.
inline void record_figures(const actor_system& system) {
  const char* path = std::getenv("TACT_TEST_FIGURES");
  if (path == nullptr) return;
  std::ofstream{path, std::ios::app} << system.stats().total.messages_processed << '\n';
}

// Counts diagnostics by kind, from any thread, without a lock or an
// allocation: for tests where diagnostics come by the thousand, or while
// allocations fail. diagnostics_log keeps their texts.
class diagnostic_tally {
 public:
  std::function<void(const diagnostic&)> handler() {
    return [this](const diagnostic& d) {
      counts_[static_cast<std::size_t>(d.kind)].fetch_add(1, std::memory_order_relaxed);
    };
  }
  std::uint64_t count(diagnostic_kind kind) const {
    return counts_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
  }
  // Diagnostics of every kind but these.
  std::uint64_t other_than(std::initializer_list<diagnostic_kind> kinds) const {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < counts_.size(); ++k)
      if (std::none_of(kinds.begin(), kinds.end(),
                       [k](diagnostic_kind x) { return static_cast<std::size_t>(x) == k; }))
        n += counts_[k].load(std::memory_order_relaxed);
    return n;
  }

 private:
  std::array<std::atomic<std::uint64_t>,
             static_cast<std::size_t>(diagnostic_kind::mailbox_full) + 1>
      counts_{};
};

// Collects diagnostics from any thread; the test thread inspects them after
// the system is quiescent or stopped (Catch2 assertions are not thread-safe).
class diagnostics_log {
 public:
  std::function<void(const diagnostic&)> handler() {
    return [this](const diagnostic& d) {
      std::lock_guard guard{mutex_};
      entries_.push_back(d);
      if (on_entry_) on_entry_(d);
    };
  }
  // Runs on the reporting thread, for tests that react to a diagnostic.
  void on_entry(std::function<void(const diagnostic&)> reaction) {
    on_entry_ = std::move(reaction);
  }

  std::size_t count(diagnostic_kind kind) const {
    std::lock_guard guard{mutex_};
    return static_cast<std::size_t>(std::count_if(
        entries_.begin(), entries_.end(), [kind](const diagnostic& d) { return d.kind == kind; }));
  }
  std::vector<diagnostic> of(diagnostic_kind kind) const {
    std::lock_guard guard{mutex_};
    std::vector<diagnostic> found;
    for (const diagnostic& d : entries_)
      if (d.kind == kind) found.push_back(d);
    return found;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<diagnostic> entries_;
  std::function<void(const diagnostic&)> on_entry_;
};

}  // namespace tact::test
