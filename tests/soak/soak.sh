#!/usr/bin/env bash
# The long checks that CI has no time for. Each prints one summary line
# with its figures; the details go to build/soak/soak.log.
#
#   tests/soak/soak.sh [--minutes M] [--cycles N] [--only CHECK[,CHECK...]]
#
#   tsan        the concurrency and stress tests under ThreadSanitizer,
#               again and again for M minutes
#   invariants  the stress and fault tests at 16 workers, with queue counts
#               and copy queue floors drawn at random each round, and
#               `stress-ng --cpu 2` loading the machine every other round,
#               for M minutes
#   faults      the fault matrix: behaviours throwing at rates from 1% to
#               90%, every allocation of the scenarios failing in turn,
#               stop() at random points, each round with a new seed, for M
#               minutes
#   asan        N start/stop cycles of a system (1,000 by default) at each
#               of 1, 2 and 8 workers, under AddressSanitizer
#   spin        the model of parking against stealing for three workers,
#               with bitstate hashing (the full search does not fit), for M
#               minutes (that the model sees the lost wake-up without the
#               registration's slot check is checked for two workers by
#               ./run test: for three, spin does not reach it in hours)
#   fuzz        tests/fuzz/run_fuzz.sh for M minutes, three quarters on the
#               operations and a quarter on the wire decoder (at least a
#               second each)
#
# M defaults to 10; `--minutes 0.2` is a smoke run. Builds with two jobs,
# in build/test, build/tsan and build/asan (as ./run test does). Exits
# non-zero if any check found a violation. Not run by CI.
set -uo pipefail
cd "$(dirname "$0")/../.."

minutes=10
cycles=1000
only=tsan,invariants,faults,asan,spin,fuzz
while (($# > 0)); do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "soak: unknown argument '$1' (see the top of $0)" >&2; exit 2 ;;
  esac
done

work=$PWD/build/soak
mkdir -p "$work"
log=$work/soak.log
: >"$log"
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
failed=0

wanted() { [[ ,$only, == *,$1,* ]]; }
for check in ${only//,/ }; do
  [[ ,tsan,invariants,faults,asan,spin,fuzz, == *,$check,* ]] ||
    { echo "soak: unknown check '$check' (see the top of $0)" >&2; exit 2; }
done
now() { date +%s; }
elapsed_minutes() { awk -v s="$(($(now) - $1))" 'BEGIN { printf "%.1f", s / 60 }'; }
# The messages the tests reported in the figures file, summed.
messages_in() { awk '{ n += $1 } END { printf "%d", n }' "$1" 2>/dev/null || echo 0; }
# A fresh number for each round's random choices.
fresh_seed() { od -An -N8 -tu8 /dev/urandom | tr -d ' '; }

# shellcheck source=tests/build_options.sh
source tests/build_options.sh
# configure DIR OPTION...: as ./run test does for the same folder.
configure() {
  local dir=$1
  shift
  if [[ -f $dir/build.ninja ]]; then
    meson configure "$dir" "$@" >>"$log" 2>&1
  else
    meson setup "$dir" "$@" >>"$log" 2>&1
  fi
}

build() {
  local dir=$1
  shift
  nice ninja -j2 -C "$dir" "$@" >>"$log" 2>&1 || {
    echo "soak: building $dir failed (see $log)" >&2
    exit 2
  }
}

./run setup >>"$log" 2>&1
./run setup soak >>"$log" 2>&1 || echo "stress-ng could not be installed: the invariants run without it" >>"$log"

# The plain build's tests that hold for any shape of system (they read
# TACT_TEST_WORKERS, TACT_TEST_QUEUES and TACT_TEST_QUEUE_FLOOR).
shape_free=(stress-conservation stress-nested_ask stress-tx_reclamation faults-exceptions
  faults-ask_race faults-timer_race faults-stop_race)

if wanted invariants || wanted faults; then
  configure build/test "${PLAIN_BUILD_OPTIONS[@]}"
  targets=()
  for t in "${shape_free[@]}" faults-allocation_failure; do targets+=("tests/test-$t"); done
  build build/test "${targets[@]}"
fi

# ---- tsan ----
if wanted tsan; then
  configure build/tsan "${TSAN_BUILD_OPTIONS[@]}"
  build build/tsan
  figures=$work/tsan.figures
  : >"$figures"
  start=$(now) rounds=0 runs=0 violations=0
  while ((rounds == 0 || $(now) - start < seconds)); do
    rounds=$((rounds + 1))
    out=$(TACT_STRESS_SCALE=0.25 TACT_TEST_FIGURES=$figures \
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
      meson test -C build/tsan --no-rebuild --print-errorlogs --suite concurrency --suite stress 2>&1)
    echo "$out" >>"$log"
    runs=$((runs + $(echo "$out" | awk '/^Ok:/ { n += $2 } /^Fail:/ { n += $2 } /^Timeout:/ { n += $2 } END { print n + 0 }')))
    violations=$((violations + $(echo "$out" | awk '/^Fail:/ { n += $2 } /^Timeout:/ { n += $2 } END { print n + 0 }')))
  done
  echo "tsan: $rounds rounds, $runs test runs, $(messages_in "$figures") messages, $(elapsed_minutes "$start") minutes, $violations violations"
  ((violations == 0)) || failed=1
fi

# Runs one test binary of build/test with the environment given before it;
# returns its status, its output going to the log.
run_test() {
  local name=$1
  shift
  echo "== $name $*" >>"$log"
  env "$@" "build/test/tests/test-$name" >>"$log" 2>&1
}

# ---- invariants ----
if wanted invariants; then
  figures=$work/invariants.figures
  : >"$figures"
  start=$(now) rounds=0 loaded=0 violations=0 runs=0
  floors=(1 2 3 4 8 16 32 64 128)
  have_stress_ng=0
  command -v stress-ng >/dev/null && have_stress_ng=1
  while ((rounds == 0 || $(now) - start < seconds)); do
    rounds=$((rounds + 1))
    queues=$((16 + RANDOM % 497))  # 16 to 512: at least one per worker
    floor=${floors[RANDOM % ${#floors[@]}]}
    load_pid=
    if ((have_stress_ng && rounds % 2 == 1)); then
      loaded=$((loaded + 1))
      stress-ng --cpu 2 --timeout 3600 >>"$log" 2>&1 &
      load_pid=$!
    fi
    for t in "${shape_free[@]}"; do
      runs=$((runs + 1))
      seed=$(fresh_seed)
      run_test "$t" TACT_TEST_WORKERS=16 TACT_TEST_QUEUES=$queues TACT_TEST_QUEUE_FLOOR=$floor \
        TACT_TEST_SEED="$seed" TACT_TEST_FIGURES="$figures" ||
        { violations=$((violations + 1)); echo "VIOLATION: $t, queues $queues, floor $floor, TACT_TEST_SEED=$seed" >>"$log"; }
    done
    if [[ -n $load_pid ]]; then
      kill "$load_pid" 2>/dev/null
      wait "$load_pid" 2>/dev/null
    fi
  done
  load_note="stress-ng --cpu 2 in $loaded"
  ((have_stress_ng)) || load_note="no stress-ng"
  echo "invariants: $rounds rounds of ${#shape_free[@]} tests at 16 workers ($runs runs, queues 16-512, floors 1-128, $load_note), $(messages_in "$figures") messages, $(elapsed_minutes "$start") minutes, $violations violations"
  ((violations == 0)) || failed=1
fi

# ---- faults ----
if wanted faults; then
  figures=$work/faults.figures
  : >"$figures"
  start=$(now) rounds=0 runs=0 violations=0
  rates=(0.01 0.1 0.5 0.9)
  while ((rounds == 0 || $(now) - start < seconds)); do
    rounds=$((rounds + 1))
    for rate in "${rates[@]}"; do
      runs=$((runs + 1))
      seed=$(fresh_seed)
      run_test faults-exceptions TACT_FAULT_RATE="$rate" TACT_TEST_SEED="$seed" TACT_STRESS_SCALE=2 \
        TACT_TEST_FIGURES="$figures" ||
        { violations=$((violations + 1)); echo "VIOLATION: exceptions at $rate, TACT_TEST_SEED=$seed" >>"$log"; }
    done
    runs=$((runs + 2))
    seed=$(fresh_seed)
    run_test faults-stop_race TACT_TEST_SEED="$seed" TACT_TEST_FIGURES="$figures" ||
      { violations=$((violations + 1)); echo "VIOLATION: stop_race, TACT_TEST_SEED=$seed" >>"$log"; }
    run_test faults-allocation_failure ||
      { violations=$((violations + 1)); echo "VIOLATION: allocation_failure" >>"$log"; }
  done
  echo "faults: $rounds rounds ($runs runs: throwing at ${rates[*]}, every allocation failing, stop at random points), $(messages_in "$figures") messages, $(elapsed_minutes "$start") minutes, $violations violations"
  ((violations == 0)) || failed=1
fi

# ---- asan ----
if wanted asan; then
  configure build/asan "${ASAN_BUILD_OPTIONS[@]}"
  build build/asan tests/test-executor-lifecycle
  start=$(now)
  scale=$(awk -v n="$cycles" 'BEGIN { print n / 20 }')  # the test makes 20 cycles at scale 1
  violations=0
  echo "== asan: $cycles cycles per worker count" >>"$log"
  TACT_STRESS_SCALE=$scale ASAN_OPTIONS="detect_leaks=1:halt_on_error=1" \
    build/asan/tests/test-executor-lifecycle "a process can start and stop systems again and again" \
    >>"$log" 2>&1 || violations=1
  echo "asan: $((3 * cycles)) start/stop cycles ($cycles each at 1, 2 and 8 workers), $(elapsed_minutes "$start") minutes, $violations violations"
  ((violations == 0)) || failed=1
fi

# ---- spin ----
if wanted spin; then
  start=$(now)
  model=$PWD/src/executor/parking.pml
  dir=$work/spin
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && spin -DWORKERS=3 -DSLOT_CHECK -a "$model" &&
    cc -O2 -w -DSAFETY -DBITSTATE -o pan pan.c) >>"$log" 2>&1
  # 2^32 bits (512 MiB), three hash functions; stopped after M minutes.
  report=$dir/pan.out
  timeout "$seconds" "$dir/pan" -m1000000 -w32 -k3 >"$report" 2>&1
  cat "$report" >>"$log"
  errors=$(awk '/errors:/ { for (i = 1; i <= NF; i++) if ($i == "errors:") print $(i + 1) }' "$report" | tail -n 1)
  errors=${errors:-0}
  grep -q "assertion violated" "$report" && errors=$((errors > 0 ? errors : 1))
  # States explored: the final count if the search ended, else the last progress line.
  states=$(awk '/states, stored/ { s = $1 } /^Depth=/ { for (i = 1; i <= NF; i++) if ($i ~ /^States=/) { v = $i; sub("States=", "", v); if (v == "") v = $(i + 1); p = v } } END { print (s != "" ? s : p) }' "$report")
  if grep -q "states, stored" "$report"; then finished="search complete"; else finished="stopped after $minutes minutes"; fi
  hash_factor=$(awk -v s="$states" 'BEGIN { if (s + 0 > 0) printf "%.1f", 2 ^ 32 / s; else print "?" }')
  echo "spin: 3 workers, bitstate 2^32 bits, $states states ($finished), hash factor $hash_factor, $(elapsed_minutes "$start") minutes, $errors violations"
  ((errors == 0)) || failed=1
fi

# ---- fuzz ----
if wanted fuzz; then
  start=$(now)
  violations=0
  # Three quarters of the time to the operations, a quarter to the wire decoder.
  fuzz_seconds=$((seconds * 3 / 4 > 0 ? seconds * 3 / 4 : 1))
  wire_seconds=$((seconds / 4 > 0 ? seconds / 4 : 1))
  tests/fuzz/run_fuzz.sh "$fuzz_seconds" >>"$log" 2>&1 || violations=1
  tests/fuzz/run_fuzz.sh "$wire_seconds" --target wire >>"$log" 2>&1 || violations=$((violations + 1))
  echo "fuzz: tests/fuzz/run_fuzz.sh $fuzz_seconds, --target wire $wire_seconds, $(elapsed_minutes "$start") minutes, $violations violations"
  ((violations == 0)) || failed=1
fi

exit $failed
