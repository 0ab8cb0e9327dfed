#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <tact/diagnostic.hpp>

namespace tact::test {

// Multiplies the sizes of stress and soak loops: TACT_STRESS_SCALE=0.25 under
// ThreadSanitizer (several times slower), larger values for longer soaks.
inline std::uint64_t scaled(std::uint64_t count) {
  const char* text = std::getenv("TACT_STRESS_SCALE");
  const double scale = text != nullptr ? std::strtod(text, nullptr) : 1.0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(count) * scale));
}

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
