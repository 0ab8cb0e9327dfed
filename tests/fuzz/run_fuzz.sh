#!/usr/bin/env bash
# Runs a fuzzer for a while: the operations fuzzer (tests/fuzz/ops_fuzz.cpp,
# the default) or the wire decoder's (tests/fuzz/wire_fuzz.cpp).
#
#   tests/fuzz/run_fuzz.sh SECONDS [--jobs N] [--target ops|wire]
#
# Builds build/fuzz with Clang if needed (meson option fuzz), then fuzzes
# for SECONDS starting from the target's corpus (tests/fuzz/corpus,
# tests/fuzz/wire_corpus), with N processes (default 1). New inputs go to
# build/fuzz/found (build/fuzz/found-wire; kept from run to run, merged
# down to those that add coverage when they pile up; never into the
# repository); a crash, a mismatch with the reference model or a value
# that does not encode back to its bytes is written to build/fuzz/findings. Prints one summary
# line; on a finding, also what went wrong and how to reproduce it, and
# exits 1. Needs clang and libclang-rt-14-dev (./run setup fuzz).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { echo "run_fuzz: $*" >&2; exit 2; }

# At least one: libFuzzer reads -max_total_time=0 as "no limit".
(($# >= 1)) && [[ $1 =~ ^[1-9][0-9]*$ ]] || die "usage: tests/fuzz/run_fuzz.sh SECONDS [--jobs N] [--target ops|wire] (SECONDS >= 1)"
seconds=$1
shift
jobs=1
target=ops
while (($# > 0)); do
  case $1 in
    --jobs) (($# >= 2)) || die "--jobs needs a value"; jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    --target) (($# >= 2)) || die "--target needs a value"; target=$2; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive number, not '$jobs'"
# Per target: corpus, where found inputs go, the longest input, and what
# else libFuzzer is told (the wire decoder must never allocate past its
# limits, 1 MiB in the target: a single allocation of 64 MiB is a finding).
case $target in
  ops) corpus_dir=corpus found_dir=found max_len=261 extra=() ;;
  wire) corpus_dir=wire_corpus found_dir=found-wire max_len=4096 extra=(-malloc_limit_mb=64) ;;
  *) die "--target is ops or wire, not '$target'" ;;
esac

dir=build/fuzz
mkdir -p build
# One setup and build at a time: ./run test runs both targets side by side.
exec 9>"$dir.lock"
flock 9
if [[ ! -f $dir/build.ninja ]]; then
  CXX=clang++ meson setup "$dir" -Dfuzz=true -Dchecks=enabled -Dbuildtype=debugoptimized \
    >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; die "setting up $dir failed"; }
  rm -f "$dir.setup.log"
fi
ninja -C "$dir" -j 2 >"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; die "building $dir failed"; }
flock -u 9

fuzzer=$PWD/$dir/tests/fuzz/$target-fuzz
corpus=$PWD/tests/fuzz/$corpus_dir
found=$PWD/$dir/$found_dir
findings=$PWD/$dir/findings
logs=$PWD/$dir/logs-$target
mkdir -p "$found" "$findings"
rm -rf "$logs"
mkdir -p "$logs"

# The first directory receives what the fuzzer finds; the corpus is only read.
args=("-max_total_time=$seconds" "-max_len=$max_len" -timeout=10 -rss_limit_mb=2048 "${extra[@]}"
  -print_final_stats=1 "-artifact_prefix=$findings/" "$found" "$corpus")
status=0
if ((jobs == 1)); then
  "$fuzzer" "${args[@]}" >"$logs/fuzz-0.log" 2>&1 || status=$?
else
  # Each job runs for SECONDS in its own process, sharing the found inputs.
  (cd "$logs" && "$fuzzer" "-jobs=$jobs" "-workers=$jobs" "${args[@]}" >jobs.log 2>&1) || status=$?
fi

# One line: executions, coverage (the largest any job reached), time, findings.
read -r executions cov features < <(awk '
  /^stat::number_of_executed_units:/ { runs += $2 }
  / cov: / { for (i = 1; i < NF; ++i) {
      if ($i == "cov:" && $(i + 1) > cov) cov = $(i + 1)
      if ($i == "ft:" && $(i + 1) > ft) ft = $(i + 1) } }
  END { print runs + 0, cov + 0, ft + 0 }' "$logs"/fuzz-*.log)
new=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$logs"/fuzz-*.log | sort -u)
crashes=$(grep -c . <<<"$new" || true)
# Keep only the found inputs that add coverage once they pile up, so that
# the next run does not spend its first seconds replaying redundant ones.
if ((crashes == 0 && status == 0)) && (($(ls "$found" | wc -l) > 1000)); then
  rm -rf "$found.merged"
  mkdir "$found.merged"
  if "$fuzzer" -merge=1 "$found.merged" "$found" >"$logs/merge.log" 2>&1; then
    rm -rf "$found"
    mv "$found.merged" "$found"
  fi
fi

echo "fuzz ($target): $executions executions in ${seconds} s ($((executions / seconds))/s)," \
  "$jobs job(s), coverage $cov edges / $features features, corpus $(ls "$found" | wc -l) found +" \
  "$(ls "$corpus" | wc -l) kept, $crashes crash(es)"

if ((crashes > 0 || status != 0)); then
  grep -h -m3 -E '^(ops|wire)_fuzz: |^==[0-9]+==ERROR|^SUMMARY' "$logs"/fuzz-*.log >&2 || true
  if ((crashes == 0)); then
    echo "run_fuzz: the fuzzer exited with status $status; its log is in $logs" >&2
  fi
  for f in $new; do
    echo "run_fuzz: finding $f" >&2
    echo "  reproduce: $fuzzer $f" >&2
    if [[ $target == ops ]]; then
      echo "  read it:   python3 tests/fuzz/make_corpus.py show $f" >&2
    else
      echo "  read it:   xxd $f  (first byte: the type, see wire_fuzz.cpp)" >&2
    fi
    echo "  minimize:  $fuzzer -minimize_crash=1 -max_total_time=60 $f" >&2
  done
  exit 1
fi
