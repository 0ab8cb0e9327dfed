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
// and exits 0; a wrong result prints the reason on stderr and exits 1.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace suite {

class options {
 public:
  options(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--quick") {
        quick_ = true;
      } else if (arg == "--threads" && i + 1 < argc) {
        threads_ = static_cast<unsigned>(std::stoul(argv[++i]));
      } else if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
        const auto eq = arg.find('=');
        given_[arg.substr(2, eq - 2)] = std::stoll(arg.substr(eq + 1));
      } else {
        std::cerr << "usage: " << argv[0] << " [--threads N] [--quick] [--NAME=VALUE...]\n";
        std::exit(2);
      }
    }
    if (threads_ == 0) threads_ = 1;
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
  unsigned threads_ = 1;
  bool quick_ = false;
  std::map<std::string, std::int64_t> given_;
  std::map<std::string, std::int64_t> used_;
};

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
// is meaningful (0 prints ns_per_msg as null).
inline void report(const options& o, const std::string& bench, const std::string& system,
                   double secs, std::uint64_t messages) {
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
  line << "}\n";
  std::fputs(line.str().c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace suite
