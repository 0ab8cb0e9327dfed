#pragma once

#include <cstdio>
#include <cstdlib>

#include <tact/build_config.hpp>
#include <tact/detail/atomic.hpp>

namespace tact::detail {

// A precondition of the engine's own code does not hold: a bug in tact,
// not in the program. Says which, and where, and aborts.
[[noreturn, gnu::cold]] inline void assertion_failed(const char* condition, const char* why,
                                                     const char* function, const char* file,
                                                     unsigned line) noexcept {
  std::fprintf(stderr, "tact: bug: %s (%s) does not hold in %s, %s:%u\n", why, condition, function,
               file, line);
  std::abort();
}

}  // namespace tact::detail

// TACT_ASSERT(condition, why): the checked form of a precondition that an
// internal header states. With checks on (meson option `checks`) a false
// condition aborts through assertion_failed; with checks off the condition
// is not even evaluated, so it may cost what it likes. A macro only to name
// the condition's text and the caller's place (std::source_location would
// do the latter, but Clang 14, which builds the fuzzer, lacks it). Off in
// model checks too (tests/model): they check their protocol's own
// invariants, and a mutant that breaks a precondition must fail as the
// protocol's bug it stands for.
#define TACT_ASSERT(condition, why)                                                      \
  do {                                                                                   \
    if constexpr (::tact::build::checks && !::tact::detail::model_checked) {             \
      if (!(condition)) [[unlikely]]                                                     \
        ::tact::detail::assertion_failed(#condition, why, __PRETTY_FUNCTION__, __FILE__, \
                                         __LINE__);                                      \
    }                                                                                    \
  } while (false)
