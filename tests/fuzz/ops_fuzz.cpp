#include <cstddef>
#include <cstdint>

#include "harness.hpp"
#include "program.hpp"

// The fuzz target: bytes -> a program of actor operations and a schedule,
// run on the deterministic executor against the reference model. Built
// with libFuzzer (meson option `fuzz`), or with replay_main.cpp to replay
// inputs as a test. See docs/fuzzing.md.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tact_fuzz::run(tact_fuzz::decode(data, size));
  return 0;
}
