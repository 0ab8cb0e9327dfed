#include <cstdio>
#include <cstdlib>
#include <string>

#include <tact/diagnostic.hpp>

#include "executor/seam.hpp"

namespace tact {

void print_diagnostic(const diagnostic& d) {
  const std::string line = "tact: " + d.text + '\n';
  // One write, so that lines from concurrent reports do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Straight to standard error, not through the system's handler: the system
// may be gone, and the process ends here.
void detail::lifetime_violated(const std::string& what) noexcept {
  std::fprintf(stderr, "tact: %s\n", what.c_str());
  std::abort();
}

}  // namespace tact
