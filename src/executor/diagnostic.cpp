#include <cstdio>
#include <string>

#include <tact/diagnostic.hpp>

namespace tact {

void print_diagnostic(const diagnostic& d) {
  const std::string line = "tact: " + d.text + '\n';
  // One write, so that lines from concurrent reports do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace tact
