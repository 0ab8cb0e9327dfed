#pragma once

// What every Relacy model of the engine shares: running a check, running a
// mutant that the check must catch, and replaying a failure.
//
// A model's main() lists its checks (a test suite with a search: exhaustive
// for two threads, bounded or random for three) and its mutants (a check
// rerun with one ordering weakened, see model::weakening in
// tact/detail/atomic.hpp, or with the harness changed). It passes when
// every check holds and every mutant is caught. A failing check prints
// Relacy's execution history and the command that replays it:
//
//   MODEL --replay NAME STATE
//
// which reruns check NAME from the failing execution (STATE is Relacy's
// record of its scheduling decisions) and prints that history again.

#include <tact/detail/atomic.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace tact::model {

// How a check searches: every interleaving, interleavings with at most
// `bound` preemptions, or `iterations` random ones.
struct search {
  rl::scheduler_type_e type = rl::sched_full;
  unsigned bound = 0;
  unsigned iterations = 0;

  static search full() { return {rl::sched_full, 0, 0}; }
  static search bounded(unsigned preemptions) { return {rl::sched_bound, preemptions, 0}; }
  static search random(unsigned iterations) { return {rl::sched_random, 0, iterations}; }
};

class model {
 public:
  explicit model(const char* name) : name_{name} {}

  // A property that must hold. Suite: an rl::test_suite.
  template <class Suite>
  void check(const char* name, search how) {
    entries_.push_back({name, how, {}, rl::test_result_success, &run<Suite>});
  }
  // The suite with operations weakened as in mutant(), which must still
  // hold: for where Relacy orders an operation more strongly than the
  // hardware does.
  template <class Suite>
  void check(const char* name, search how, const char* function, std::memory_order order) {
    entries_.push_back({name, how, {function, order}, rl::test_result_success, &run<Suite>});
  }
  // A mutant of the engine: the same suite with the ordering of the atomic
  // operations called from `function` (a substring of its name) weakened to
  // `order`. Relacy must report a failure of the kind `expected` (a data
  // race, a deadlock, ...): a failure of another kind would mean the model
  // broke some other way, not that it saw the bug.
  template <class Suite>
  void mutant(const char* name, search how, rl::test_result_e expected, const char* function,
              std::memory_order order) {
    entries_.push_back({name, how, {function, order}, expected, &run<Suite>});
  }
  // A mutant of the harness (Suite differs from the check's in one step).
  template <class Suite>
  void mutant(const char* name, search how, rl::test_result_e expected) {
    entries_.push_back({name, how, {}, expected, &run<Suite>});
  }

  int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--replay") == 0) return replay(argv[2], argv[3]);
    if (argc != 1) {
      std::fprintf(stderr, "usage: %s [--replay NAME STATE]\n", argv[0]);
      return 2;
    }
    int failures = 0;
    for (const entry& e : entries_) failures += run_entry(e, argv[0]) ? 0 : 1;
    std::printf("%s: %d of %zu failed\n", name_, failures, entries_.size());
    return failures == 0 ? 0 : 1;
  }

 private:
  using runner = bool (*)(rl::test_params&);
  struct entry {
    const char* name;
    search how;
    detail::model::weakening weakened;
    rl::test_result_e expected;  // test_result_success for a check
    runner run;
  };

  template <class Suite>
  static bool run(rl::test_params& params) {
    return rl::simulate<Suite>(params);
  }

  static rl::test_params params_for(const search& how, std::ostream& out) {
    rl::test_params params;
    params.search_type = how.type;
    params.context_bound = how.bound;
    if (how.iterations != 0) params.iteration_count = how.iterations;
    params.output_stream = &out;
    params.progress_stream = &out;
    return params;
  }

  bool run_entry(const entry& e, const char* program) const {
    // Relacy's own string stream: its buffer must not come from the
    // operator new that Relacy replaces while it simulates.
    rl::ostringstream out;
    rl::test_params params = params_for(e.how, out);
    detail::model::weakened = e.weakened;
    const auto start = std::chrono::steady_clock::now();
    e.run(params);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    detail::model::weakened = {};
    const bool failed = params.test_result != rl::test_result_success;
    const char* result = rl::test_result_str(params.test_result);
    if (e.expected != rl::test_result_success) {
      const bool caught = params.test_result == e.expected;
      std::printf("%-62s %s at iteration %llu, %lld ms\n", e.name,
                  caught   ? "caught:"
                  : failed ? "FAILED OTHERWISE:"
                           : "NOT CAUGHT",
                  static_cast<unsigned long long>(params.stop_iteration),
                  static_cast<long long>(ms));
      if (failed) std::printf("    %s\n", failure_event(out.str(), result).c_str());
      if (failed && !caught)
        std::printf("    expected %s\n", rl::test_result_str(e.expected));
      return caught;
    }
    std::printf("%-62s %s, %llu iterations, %lld ms\n", e.name, failed ? "FAILED" : "holds",
                static_cast<unsigned long long>(params.stop_iteration), static_cast<long long>(ms));
    if (failed) {
      std::cout << out.str() << "replay: " << program << " --replay '" << e.name << "' '"
                << params.final_state.c_str() << "'\n";
    }
    return !failed;
  }

  // The history's line that reports the failure, else its kind.
  static std::string failure_event(const rl::string& history, const char* result) {
    const rl::string mark = rl::string{result} + " (";
    for (std::size_t at = 0; at < history.size();) {
      std::size_t end = history.find('\n', at);
      if (end == rl::string::npos) end = history.size();
      const rl::string line = history.substr(at, end - at);
      if (line.compare(0, 1, "[") == 0 && line.find(mark) != rl::string::npos)
        return std::string{line.substr(line.find(": ") + 2).c_str()};
      at = end + 1;
    }
    return result;
  }

  int replay(const char* name, const char* state) const {
    for (const entry& e : entries_) {
      if (std::strcmp(e.name, name) != 0) continue;
      rl::test_params params = params_for(e.how, std::cout);
      params.initial_state = state;
      params.collect_history = true;
      detail::model::weakened = e.weakened;
      e.run(params);
      return params.test_result == rl::test_result_success ? 0 : 1;
    }
    std::fprintf(stderr, "no check named '%s'\n", name);
    return 2;
  }

  const char* name_;
  std::vector<entry> entries_;
};

}  // namespace tact::model
