#!/usr/bin/env python3
"""Runs the workload suite: the programs suite-<workload>-<engine> that
meson builds from benchmarks/suite/<workload>/<engine>.cpp, each following
common/suite.hpp (one JSON result line on stdout, exit 1 on a wrong result).

    run_suite.py [NAMES...] [--threads 1,2] [--vs caf] [--quick]
                 [--repeat K] [--json FILE] [--build-dir DIR] [--busy N]

NAMES are regular expressions; a workload runs when any of them matches
part of its name (all workloads by default). Every engine's program runs
once per repetition, interleaved (tact run 1, caf run 1, tact run 2, ...),
so that drift of the shared machine hits both engines alike; the table
gives medians and the slowest run. The peak resident memory of each run is
measured from here (os.wait4) and added to its JSON line as max_rss_kb, its
processor time (user and system, the whole program) as cpu_s, the 1-minute
load average at its start as load.

--busy N runs the whole suite beside `stress-ng --cpu N`: N CPU-bound
processes competing with every run (each JSON line records busy: N).

Writes one JSON line per run to FILE (default DIR/suite.json; suite-quick
with --quick, -busy added with --busy), prints a
progress line per run on stderr and the table on stdout, and, when gnuplot
is installed, plots the medians next to FILE (.png and .svg). Workloads
that report reply times (p50_us, p99_us, max_us: latency) get a second,
small table of their medians after the first. Exits 1 if
any run failed or reported a wrong result, 2 on a usage error.
Python 3 standard library only.
"""
import argparse
import ctypes
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ENGINE = "tact"
PEERS = ("caf",)
# Reply times a latency workload adds to its result line, in microseconds.
LATENCY_FIELDS = ("p50_us", "p99_us", "max_us")
PROGRAM = re.compile(r"^suite-(?P<workload>[A-Za-z0-9_]+)-(?P<engine>[a-z0-9]+)$")
REPO = Path(__file__).resolve().parents[2]


# ---- command line ----

def thread_counts(text):
    try:
        counts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of thread counts such as 1,2")
    return counts


def process_count(text):
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes, 1 or more")
    return count


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Runs the benchmark suite (tact, optionally against CAF) and tabulates it.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="regular expressions selecting workloads (default: all)")
    p.add_argument("--threads", type=thread_counts, action="append", metavar="N[,N...]",
                   help="worker threads, a comma-separated list; may repeat (default: 1,2)")
    p.add_argument("--vs", choices=PEERS, action="append", default=[],
                   help="also run the same workloads written for this engine")
    p.add_argument("--quick", action="store_true",
                   help="the programs' small parameters: the suite in well under a minute")
    p.add_argument("--repeat", type=int, metavar="K",
                   help="runs per program and thread count (default: 3, 1 with --quick)")
    p.add_argument("--json", type=Path, metavar="FILE",
                   help="where to write the runs (default: BUILD_DIR/suite.json, "
                        "suite-quick.json with --quick, suite-busy.json with --busy)")
    p.add_argument("--build-dir", type=Path, default=REPO / "build" / "release", metavar="DIR",
                   help="the meson build folder holding the programs (default: build/release)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="a run taking longer is killed and counts as failed (default: 300)")
    p.add_argument("--busy", type=process_count, default=0, metavar="N",
                   help="run the suite beside N competing CPU-bound processes "
                        "(stress-ng --cpu N; default: none)")
    p.add_argument("--no-plot", action="store_true", help="skip the gnuplot plot")
    p.add_argument("--list", action="store_true",
                   help="print the workloads NAMES select and exit (1 if none)")
    args = p.parse_args(argv)
    args.threads = sorted({n for group in (args.threads or [[1, 2]]) for n in group})
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.json is None:
        # A busy run gets its own file (and plot), so that it does not
        # overwrite the quiet run it is compared with.
        name = "suite" + ("-quick" if args.quick else "") + ("-busy" if args.busy else "")
        args.json = args.build_dir / (name + ".json")
    return args


# ---- finding and running the programs ----

def suite_order(workloads):
    """The order of the `workloads` list in benchmarks/suite/meson.build
    (the thesis's order), then any others (the remote workloads) by name."""
    listed = []
    build_file = Path(__file__).with_name("meson.build")
    m = re.search(r"workloads\s*=\s*\[(.*?)\]", build_file.read_text(), re.S)
    if m:
        listed = re.findall(r"'([^']+)'", m.group(1))
    rank = {w: i for i, w in enumerate(listed)}
    return sorted(workloads, key=lambda w: (rank.get(w, len(rank)), w))


def discover(build_dir):
    """{workload: {engine: path}} for every suite program under build_dir."""
    root = build_dir / "benchmarks" / "suite"
    found = defaultdict(dict)
    for path in sorted((root if root.is_dir() else build_dir).rglob("suite-*")):
        m = PROGRAM.match(path.name)
        if m and path.is_file() and os.access(path, os.X_OK):
            found[m["workload"]][m["engine"]] = path
    return found


def cross_core_ns(build_dir):
    """The host's round trip of a cache line between two processing units, in
    ns (host-cross_core, built beside the suite), or None where it cannot
    be measured. Every send between two workers pays some of it, so it is
    printed beside the load: 2-worker times move with it between hosts."""
    path = build_dir / "benchmarks" / "suite" / "host-cross_core"
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None
    try:
        done = subprocess.run([str(path)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"round_trip_ns (\d+)", done.stdout)
    return int(m.group(1)) if done.returncode == 0 and m else None


# Peak memory, measured right. A child's ru_maxrss starts from the high-water
# mark of the process it was forked from (Linux keeps it across exec), so a
# program started from this Python process would report at least this
# process's own 15 MB. So `setsid --fork` (a small program) forks it and
# exits at once; the fork, a shell, prints its pid and execs the program in
# place. Nothing waits for the program but this process, which, as its
# children's subreaper, adopts it and collects its own peak with os.wait4.
# (A shell that starts the program with `&` itself may reap it first.)
PR_SET_CHILD_SUBREAPER = 36
LAUNCH = 'out=$1 err=$2; shift 2; echo $$; exec "$@" >"$out" 2>"$err" </dev/null'


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def run_once(path, workload, engine, threads, quick, timeout):
    """Runs one program; returns (result dict or None, error text or None)."""
    cmd = [str(path), "--threads", str(threads)] + (["--quick"] if quick else [])
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        # Returns once the shell has exec'd the program (closing the pipe)
        # and setsid has exited (so the program is ours).
        shell = subprocess.run(["setsid", "--fork", "/bin/sh", "-c", LAUNCH, "sh",
                                out.name, err.name] + cmd, stdout=subprocess.PIPE, check=True)
        pid = int(shell.stdout)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it ended meanwhile

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(pid, 0)
        except BaseException:  # interrupted: leave no program running behind us
            kill()
            os.waitpid(pid, 0)
            raise
        finally:
            timer.cancel()
        returncode = os.waitstatus_to_exitcode(status)
        stdout = Path(out.name).read_text(errors="replace")
        stderr = Path(err.name).read_text(errors="replace").strip()

    where = " ".join(cmd)
    if timed_out.is_set():
        return None, f"{where}: killed after {timeout:g} s"
    if returncode != 0:
        how = f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
        return None, f"{where}: {how}" + (f"\n{stderr}" if stderr else "")
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    try:
        result = json.loads(lines[-1])
        fields = ("bench", "system", "threads", "params", "seconds", "ns_per_msg")
        if any(field not in result for field in fields):
            raise ValueError("fields missing")
    except (IndexError, ValueError) as e:
        return None, f"{where}: no valid result line ({e}):\n{stdout.strip()}"
    said = (result["bench"], result["system"], result["threads"])
    if said != (workload, engine, threads):
        return None, f"{where}: reports itself as {said}"
    result["max_rss_kb"] = usage.ru_maxrss  # kilobytes on Linux
    result["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 4)
    return result, None


# ---- the competing load (--busy) ----
#
# stress-ng runs in a session of its own, so that its process group (it and
# its workers, nothing else) can be signalled and reaped as a whole. As our
# children's subreaper we adopt any worker whose stress-ng parent dies; that
# cannot confuse run_once, which waits only for its own program's pid.

BUSY_SETTLE_SECONDS = 5  # lets the 1-minute load average start to rise


def start_busy(count):
    """Starts `stress-ng --cpu count`; returns its Popen, or None with a
    message on stderr if it cannot run."""
    log = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(["stress-ng", "--cpu", str(count)], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        log.close()
        print(f"run_suite: cannot start stress-ng: {e}", file=sys.stderr)
        return None
    proc.log = log
    return proc


def busy_failure(proc):
    """A message if stress-ng has ended (it should run until stopped)."""
    if proc.poll() is None:
        return None
    proc.log.seek(0)
    said = proc.log.read().decode(errors="replace").strip()
    return (f"stress-ng ended before the suite did (exit status {proc.returncode})"
            + (f":\n{said}" if said else ""))


def stop_busy(proc):
    """Stops stress-ng and its workers and reaps every one that is ours.
    A second Ctrl-C meanwhile waits until this is done."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        _stop_busy(proc)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _stop_busy(proc):
    pgid = proc.pid  # a session leader's group id is its pid
    try:
        os.killpg(pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        os.killpg(pgid, signal.SIGKILL)  # workers that outlived their parent
    except ProcessLookupError:
        pass  # the group is empty already
    proc.wait()
    # Workers whose parent died were adopted by us: reap them, by group, never
    # anything else (the suite's programs live in sessions of their own).
    while True:
        try:
            os.waitpid(-pgid, 0)
        except ChildProcessError:
            break
    proc.log.close()


# ---- the table ----

def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(value, spec, missing="-"):
    return missing if value is None else format(value, spec)


def fmt_us(value):
    """Microseconds: a decimal below 100, whole numbers above."""
    if value is None:
        return "-"
    return format(value, ".1f") if value < 100 else format(value, ",.0f")


def cpus(run):
    """Processor time over timed seconds (0 for a run that timed nothing)."""
    return run["cpu_s"] / run["seconds"] if run["seconds"] > 0 else 0.0


def summarize(runs):
    """{(workload, engine, threads): medians}, from the successful runs."""
    by_key = defaultdict(list)
    for r in runs:
        by_key[(r["bench"], r["system"], r["threads"])].append(r)
    medians = {}
    for key, rs in by_key.items():
        ns = [r["ns_per_msg"] for r in rs if r["ns_per_msg"] is not None]
        medians[key] = {
            "seconds": statistics.median(r["seconds"] for r in rs),
            "slowest": max(r["seconds"] for r in rs),
            "ns_per_msg": statistics.median(ns) if ns else None,
            "max_rss_kb": statistics.median(r["max_rss_kb"] for r in rs),
            "cpus": statistics.median(cpus(r) for r in rs),
            "runs": len(rs),
        }
        for field in LATENCY_FIELDS:
            values = [r[field] for r in rs if r.get(field) is not None]
            if values:
                medians[key][field] = statistics.median(values)
    return medians


def print_markdown(head, rows, out, names=2):
    """A Markdown table, its first `names` columns left-aligned and the
    figures after them right-aligned: readable here, and pasted as is into
    docs."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    right = {i for i, h in enumerate(head) if i >= names}

    def line(cells):
        return "| " + " | ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                                 for i, c in enumerate(cells)) + " |"

    print(line(head), file=out)
    print("|" + "|".join(("-" * (w + 1) + ":") if i in right else ("-" * (w + 2))
                         for i, w in enumerate(widths)) + "|", file=out)
    for r in rows:
        print(line(r), file=out)


def print_table(medians, workloads, engines, thread_list, out=sys.stdout):
    """The main table: times, memory and the ratios to the peer."""
    peer = next((e for e in engines if e != ENGINE), None)
    head = ["benchmark", "system", "threads", "median s", "slowest s", "ns/msg", "peak RSS MB",
            "CPUs"]
    if peer:
        head += [f"time {ENGINE}/{peer}", f"slowest {ENGINE}/{peer}", f"RSS {ENGINE}/{peer}"]
    rows = []
    ratios = defaultdict(list)
    for w in workloads:
        for t in thread_list:
            for e in engines:
                m = medians.get((w, e, t))
                row = [w, e, str(t)]
                row += ([fmt(m["seconds"], ".3f"), fmt(m["slowest"], ".3f"),
                         fmt(m["ns_per_msg"], ".1f"), fmt(m["max_rss_kb"] / 1024, ".1f"),
                         fmt(m["cpus"], ".2f")]
                        if m else ["failed", "-", "-", "-", "-"])
                if peer:
                    theirs = medians.get((w, peer, t))
                    if e == ENGINE and m and theirs:
                        ratio = m["seconds"] / theirs["seconds"]
                        ratios[t].append(ratio)
                        row += [f"{ratio:.3f}", f"{m['slowest'] / theirs['slowest']:.3f}",
                                f"{m['max_rss_kb'] / theirs['max_rss_kb']:.2f}"]
                    else:
                        row += ["", "", ""]
                rows.append(row)
    print_markdown(head, rows, out)
    if peer:
        print(file=out)
        for t in thread_list:
            g = geomean(ratios[t])
            if g is None:
                continue
            faster = f"{ENGINE} {1 / g:.1f}x faster" if g < 1 else f"{peer} {g:.1f}x faster"
            print(f"geometric mean of time {ENGINE}/{peer} at {t} thread{'s' if t > 1 else ''}: "
                  f"{g:.3f} over {len(ratios[t])} benchmarks ({faster})", file=out)
    return ratios


def print_latency_table(medians, workloads, engines, thread_list, out=sys.stdout):
    """Median reply times, per workload and thread count, of the workloads
    that report them, after a blank line; nothing if none does."""
    peer = next((e for e in engines if e != ENGINE), None)
    reported = [w for w in workloads
                if any("p99_us" in medians.get((w, e, t), {}) for e in engines for t in thread_list)]
    if not reported:
        return
    head = ["benchmark", "threads"]
    for e in engines:
        head += [f"{e} p50 us", f"{e} p99 us", f"{e} max us"]
    if peer:
        head.append(f"p99 {ENGINE}/{peer}")
    rows = []
    for w in reported:
        for t in thread_list:
            row = [w, str(t)]
            for e in engines:
                m = medians.get((w, e, t), {})
                row += [fmt_us(m.get(field)) for field in LATENCY_FIELDS]
            if peer:
                mine = medians.get((w, ENGINE, t), {}).get("p99_us")
                theirs = medians.get((w, peer, t), {}).get("p99_us")
                row.append(f"{mine / theirs:.3f}" if mine is not None and theirs else "-")
            rows.append(row)
    print("\nreply times in microseconds, the median over the runs of each run's p50, p99 "
          "and max:", file=out)
    print_markdown(head, rows, out, names=1)


# ---- the plot ----

def gnuplot_terminals(gnuplot):
    probe = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True)
    return probe.stdout + probe.stderr


def plot(medians, workloads, engines, thread_list, json_path):
    """Bars per benchmark, one series per thread count: the tact/peer time
    ratio (log scale) with a peer, else tact's median seconds."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        print("note: gnuplot is not installed (./run setup plot): no plot", file=sys.stderr)
        return
    peer = next((e for e in engines if e != ENGINE), None)
    stem = json_path.with_suffix("")
    data = stem.with_suffix(".dat")
    rows = []
    for w in workloads:
        cells = []
        for t in thread_list:
            mine = medians.get((w, ENGINE, t))
            theirs = medians.get((w, peer, t)) if peer else None
            if peer:
                value = mine["seconds"] / theirs["seconds"] if mine and theirs else None
            else:
                value = mine["seconds"] if mine else None
            cells.append(fmt(value, ".6g", "NaN"))
        rows.append(f"{w.replace('_', '-')} " + " ".join(cells))
    data.write_text("\n".join(rows) + "\n")

    terminals = gnuplot_terminals(gnuplot)
    png = "pngcairo" if "pngcairo" in terminals else "png"
    series = ", ".join(
        f"'{data}' using {i + 2}:xtic(1) title '{t} thread{'s' if t > 1 else ''}'"
        for i, t in enumerate(thread_list))
    if peer:
        # Decades around the ratios, with 1 (parity) always inside.
        values = [float(v) for row in rows for v in row.split()[1:] if v != "NaN"] or [1.0]
        low = 10 ** math.floor(math.log10(min(values + [1.0])) - 0.3)
        high = 10 ** math.ceil(math.log10(max(values + [1.0])) + 0.3)
        labels = (f"set ylabel 'time {ENGINE} / {peer} (log scale; below 1: {ENGINE} faster)'\n"
                  f"set logscale y\nset yrange [{low:g}:{high:g}]\n"
                  "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2\n")
        title = f"{ENGINE} vs {peer}: median time ratio per benchmark"
    else:
        labels = "set ylabel 'median seconds'\nset yrange [0:*]\n"
        title = f"{ENGINE}: median seconds per benchmark"
    common = (f"set title '{title}'\n{labels}"
              "set style data histograms\nset style histogram clustered gap 1\n"
              "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
              "set xtics rotate by -30\nset key top left\nset grid ytics\nset rmargin 10\n")
    made = []
    # Wide enough for every label, whatever the number of workloads.
    size = f"size {max(900, 40 * len(rows) + 200)},540"
    for terminal, suffix in ((f"{png} {size}", ".png"), (f"svg {size}", ".svg")):
        target = stem.with_suffix(suffix)
        script = f"set terminal {terminal}\nset output '{target}'\n{common}plot {series}\n"
        done = subprocess.run([gnuplot], input=script, text=True, capture_output=True)
        if done.returncode != 0:
            print(f"note: gnuplot failed on {target.name}: {done.stderr.strip()}",
                  file=sys.stderr)
        else:
            made.append(str(target))
    if made:
        print(f"plot: {', '.join(made)}", file=sys.stderr)


# ---- main ----

def main(argv):
    args = parse_args(argv)
    found = discover(args.build_dir)
    if not found:
        print(f"run_suite: no suite programs under {args.build_dir} (build it first)",
              file=sys.stderr)
        return 2
    patterns = [re.compile(n) for n in args.names]
    workloads = [w for w in suite_order(found)
                 if not patterns or any(p.search(w) for p in patterns)]
    if args.list:
        print("\n".join(workloads))
        return 0 if workloads else 1
    if not workloads:
        print(f"run_suite: no workload matches {' '.join(args.names)} "
              f"(known: {' '.join(sorted(found))})", file=sys.stderr)
        return 2
    engines = [ENGINE] + [p for p in PEERS if p in args.vs]
    missing = [f"suite-{w}-{e}" for w in workloads for e in engines if e not in found[w]]
    if missing:
        print(f"run_suite: not built: {' '.join(missing)}"
              + (" (CAF: `./run setup caf`, then rebuild)" if len(engines) > 1 else ""),
              file=sys.stderr)
        return 2

    if args.busy and shutil.which("stress-ng") is None:
        print("run_suite: --busy needs stress-ng (./run setup soak)", file=sys.stderr)
        return 2

    become_subreaper()
    # A SIGTERM or SIGHUP ends the suite as Ctrl-C does: through the finally
    # clauses, so that neither a program nor stress-ng outlives the runner.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    plan = [(rep, w, t, e) for rep in range(args.repeat) for w in workloads
            for t in args.threads for e in engines]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    runs, failures, failed_keys, loads = [], [], set(), []
    busy = None
    # Before the competing load starts, and after it stops.
    cross_core_before = cross_core_ns(args.build_dir)
    try:
        if args.busy:
            busy = start_busy(args.busy)
            if busy is None:
                return 2
            print(f"busy: stress-ng --cpu {args.busy} started; waiting "
                  f"{BUSY_SETTLE_SECONDS} s for the load to rise", file=sys.stderr)
            time.sleep(BUSY_SETTLE_SECONDS)
        load_before = os.getloadavg()[0]
        with open(args.json, "w") as sink:
            for n, (rep, w, t, e) in enumerate(plan, 1):
                tag = (f"[{n:>{len(str(len(plan)))}}/{len(plan)}] {w:<16} {e:<5} "
                       f"threads {t}  run {rep + 1}/{args.repeat}")
                if (w, e, t) in failed_keys:
                    print(f"{tag}  skipped (failed before)", file=sys.stderr)
                    continue
                gone = busy_failure(busy) if busy else None
                if gone:
                    print(f"run_suite: --busy: {gone}", file=sys.stderr)
                    return 1
                load = os.getloadavg()[0]
                loads.append(load)
                result, error = run_once(found[w][e], w, e, t, args.quick, args.timeout)
                if error:
                    failed_keys.add((w, e, t))
                    failures.append(error)
                    print(f"{tag}  load {load:5.2f}  FAILED\n{error}", file=sys.stderr)
                    continue
                result["load"] = round(load, 2)
                result["busy"] = args.busy
                runs.append(result)
                sink.write(json.dumps(result) + "\n")
                sink.flush()
                ns = result["ns_per_msg"]
                p99 = result.get("p99_us")
                print(f"{tag}  load {load:5.2f}  {result['seconds']:8.3f} s"
                      + (f"  {ns:10.1f} ns/msg" if ns is not None else f"  {'':>10}       ")
                      + f"  {result['max_rss_kb'] / 1024:7.1f} MB"
                      + f"  {cpus(result):5.2f} CPUs"
                      + (f"  p99 {fmt_us(p99)} us" if p99 is not None else ""), file=sys.stderr)
        load_after = os.getloadavg()[0]
    finally:
        if busy is not None:
            stop_busy(busy)
    cross_core_after = cross_core_ns(args.build_dir)

    medians = summarize(runs)
    print()
    print_table(medians, workloads, engines, args.threads)
    print_latency_table(medians, workloads, engines, args.threads)
    # Other work on the machine slows either engine; say how much there was.
    print(f"\nload average (1 min) at start {load_before:.2f}, at end {load_after:.2f}, "
          f"on {os.cpu_count()} processing units")
    if loads:
        print(f"load (1 min) over the runs: min {min(loads):.2f}, "
              f"median {statistics.median(loads):.2f}, max {max(loads):.2f}")
    if cross_core_before is not None and cross_core_after is not None:
        print(f"cross-core round trip (a cache line to another processing unit and back): "
              f"{cross_core_before} ns at start, {cross_core_after} ns at end")
    if args.busy:
        print(f"busy: {args.busy} competing CPU-bound process{'es' if args.busy > 1 else ''} "
              f"(stress-ng --cpu {args.busy}) beside every run")
    print(f"\nruns: {args.json}", file=sys.stderr)
    if not args.no_plot and runs:
        plot(medians, workloads, engines, args.threads, args.json)
    if failures:
        print(f"\nrun_suite: {len(failures)} program(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f.splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
