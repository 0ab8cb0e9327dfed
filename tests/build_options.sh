# shellcheck shell=bash
# The Meson options of the three test builds, sourced by ./run (test) and
# tests/soak/soak.sh so that both configure each folder alike and neither
# makes the other rebuild it.
#
# Debug information is line tables only (-g1): enough for the stack traces
# of a failing check, a sanitizer report or gdb's backtrace. The sanitizer
# builds are optimized at -O1, as the sanitizers' documentation suggests
# for speed with usable reports. A test under the address sanitizer
# compiles in about half the time at -O1 -g1 that it takes at -O2 -g.

# shellcheck disable=SC2034 # used by the scripts that source this file
PLAIN_BUILD_OPTIONS=(-Doptimization=2 -Ddebug=false -Dcpp_args=-g1 -Dtests=enabled
  -Dbenchmarks=enabled -Dexamples=enabled -Dchecks=enabled)
# shellcheck disable=SC2034
TSAN_BUILD_OPTIONS=(-Doptimization=1 -Ddebug=false -Dcpp_args=-g1 -Db_sanitize=thread
  -Dtests=enabled -Dbenchmarks=disabled -Dexamples=disabled -Dchecks=enabled)
# Without -Werror: GCC warns about the standard library's own code under
# the address sanitizer.
# shellcheck disable=SC2034
ASAN_BUILD_OPTIONS=(-Doptimization=1 -Ddebug=false -Dcpp_args=-g1 -Db_sanitize=address
  -Dwerror=false -Dtests=enabled -Dbenchmarks=disabled -Dexamples=disabled -Dchecks=enabled)
