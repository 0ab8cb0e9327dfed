#pragma once

// What every workload program of the suite shares, whichever engine it is
// written for: the command line, the clock, the result check and the one
// JSON line it prints. The runner (benchmarks/suite/run_suite.py) starts a
// program per run and measures its peak memory from outside.
//
//   suite-<workload>-<engine> [--threads N] [--quick] [--NAME=VALUE...]
//
// prints, on success, one line on stdout:
//   {"bench": "...", "system": "tact", "threads": 2, "params": {...},
//    "seconds": 0.81, "ns_per_msg": 12.5}
// (a workload may add fields of its own after ns_per_msg: latency adds
// its reply times) and exits 0; a wrong result prints the reason on stderr
// and exits 1.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace suite {

// Fields a workload adds to its result line, in this order, after
// ns_per_msg: a name and a number each.
using fields = std::vector<std::pair<std::string, double>>;

class options {
 public:
  options(int argc, char** argv) : program_{argv[0]} {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto eq = arg.find('=');
      const std::string name = arg.substr(0, eq);
      if (arg == "--quick") {
        quick_ = true;
      } else if (name == "--threads" && (eq != std::string::npos || i + 1 < argc)) {
        // `--threads N` and `--threads=N` alike: the second form used to be
        // taken for a parameter and ignored, running with one thread.
        const std::int64_t n = number(eq != std::string::npos ? arg.substr(eq + 1) : argv[++i]);
        if (n < 1) usage("--threads must be at least 1");
        threads_ = static_cast<unsigned>(n);
      } else if (arg.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2) {
        given_[arg.substr(2, eq - 2)] = number(arg.substr(eq + 1));
      } else {
        usage("unexpected argument '" + arg + "'");
      }
    }
  }

  unsigned threads() const noexcept { return threads_; }
  bool quick() const noexcept { return quick_; }

  // The value of parameter `name`: given on the command line, else the
  // default for a full or a --quick run. Every parameter read is reported.
  std::int64_t param(const std::string& name, std::int64_t full, std::int64_t quick) {
    auto given = given_.find(name);
    const std::int64_t value = given != given_.end() ? given->second : quick_ ? quick : full;
    used_[name] = value;
    return value;
  }

  const std::map<std::string, std::int64_t>& used() const noexcept { return used_; }

 private:
  friend void report(const options&, const std::string&, const std::string&, double,
                     std::uint64_t, const fields&);

  [[noreturn]] void usage(const std::string& why) const {
    std::cerr << program_ << ": " << why << "\nusage: " << program_
              << " [--threads N] [--quick] [--NAME=VALUE...]\n";
    std::exit(2);
  }

  // A whole decimal number, or a usage error (std::stoll alone would
  // accept "12abc" and end the program with an uncaught exception on "abc").
  std::int64_t number(const std::string& text) const {
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) usage("'" + text + "' is not a whole number");
    return value;
  }

  // A parameter given on the command line that the workload never read: a
  // misspelt name would otherwise run, and be reported, with the default.
  void refuse_unknown() const {
    for (const auto& given : given_)
      if (used_.count(given.first) == 0) usage("unknown parameter --" + given.first);
  }

  std::string program_;
  unsigned threads_ = 1;
  bool quick_ = false;
  std::map<std::string, std::int64_t> given_;
  std::map<std::string, std::int64_t> used_;
};

// The workload name a program reports: `own`, unless the build names it
// otherwise. One source can then build the programs of two workloads: the
// CAF program of a classic Savina workload is also the CAF side of its
// transactional twin, compiled with -DSUITE_BENCH="tx_<name>" (the runner
// checks that a program reports the workload its file name says).
inline std::string bench_name(const char* own) {
#ifdef SUITE_BENCH
  static_cast<void>(own);
  return SUITE_BENCH;
#else
  return own;
#endif
}

// A wrong result: the run proves nothing, so the program fails loudly.
[[noreturn]] inline void fail(const std::string& why) {
  std::cerr << "wrong result: " << why << '\n';
  std::exit(1);
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// Wall-clock seconds that f() takes.
template <class F>
double seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The result line. `messages`: messages the workload delivered, when that
// is meaningful (0 prints ns_per_msg as null); `extra`: the workload's own
// fields, if any.
inline void report(const options& o, const std::string& bench, const std::string& system,
                   double secs, std::uint64_t messages, const fields& extra = {}) {
  o.refuse_unknown();
  std::ostringstream line;
  line << "{\"bench\": \"" << bench << "\", \"system\": \"" << system
       << "\", \"threads\": " << o.threads() << ", \"params\": {";
  const char* sep = "";
  for (const auto& [name, value] : o.used()) {
    line << sep << '"' << name << "\": " << value;
    sep = ", ";
  }
  line << "}, \"seconds\": " << secs << ", \"ns_per_msg\": ";
  if (messages > 0)
    line << secs * 1e9 / static_cast<double>(messages);
  else
    line << "null";
  for (const auto& [name, value] : extra) line << ", \"" << name << "\": " << value;
  line << "}\n";
  std::fputs(line.str().c_str(), stdout);
  std::fflush(stdout);
}

// The fields of a latency workload's result line, from its reply times in
// microseconds (at least one): how many (pings), the median (p50_us), the
// 99th percentile (p99_us) and the longest (max_us). Percentiles by nearest
// rank: the smallest time that at least that share of the replies took no
// longer than.
inline fields latency_fields(std::vector<double> us) {
  check(!us.empty(), "no reply times to summarize");
  std::sort(us.begin(), us.end());
  const auto rank = [&](double share) {
    const auto n = static_cast<double>(us.size());
    const auto at = static_cast<std::size_t>(std::ceil(share * n));
    return us[std::clamp<std::size_t>(at, 1, us.size()) - 1];
  };
  return {{"pings", static_cast<double>(us.size())},
          {"p50_us", rank(0.50)},
          {"p99_us", rank(0.99)},
          {"max_us", us.back()}};
}

}  // namespace suite
