#!/usr/bin/env python3
"""Prints how the engine's hand-offs compare with Boost.Lockfree, from a
Google Benchmark JSON file of tact-handoff run with repetitions: per
hand-off (mailbox, timer inbox; throughput per producer count, and round
trip latency) the median ns per item or per round trip of ours and of each
Boost.Lockfree candidate, and the candidate / ours ratio, all from the
same interleaved run. Also the load average when the run started and now,
since the machine may be shared."""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402

FAMILIES = (
    ("mailbox", "ns per envelope"),
    ("inbox", "ns per record"),
    ("latency_mailbox", "ns per round trip, the median of each timed alone"),
    ("latency_inbox", "ns per round trip, the median of each timed alone"),
)


def load_now():
    try:
        with open("/proc/loadavg") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def split(run_name):
    """handoff_<family>_<variant>[/producers:N]/real_time ->
    (family, variant, producers)."""
    parts = run_name.split("/")
    producers = next((p.split(":")[1] for p in parts if p.startswith("producers:")), "1")
    name = parts[0][len("handoff_"):]
    for family, _ in sorted(FAMILIES, key=lambda f: -len(f[0])):
        if name.startswith(family + "_"):
            return family, name[len(family) + 1:], producers
    return None


def figure(run):
    """ns per item (throughput), or the median round trip (latency: the
    mean would weigh the round trips that the OS preempted)."""
    if "rtt_median_ns" in run:
        return run["rtt_median_ns"]
    return run["per_msg"] * 1e9


def main(path):
    table = defaultdict(dict)  # (family, producers) -> variant -> median run
    for run in gbench_json.medians(path):
        key = split(run["run_name"])
        if key is not None and "per_msg" in run:
            family, variant, producers = key
            table[(family, producers)][variant] = run
    if not table:
        return 0  # the name filter matched nothing here
    with open(path) as f:
        context = json.load(f).get("context", {})
    print(f"\nload average at the start: {context.get('load_at_start', 'unknown')}")
    print(f"load average now:          {load_now()}")
    for family, unit in FAMILIES:
        for (fam, producers), variants in sorted(table.items()):
            if fam != family:
                continue
            ours = variants.get("ours")
            title = family if family.startswith("latency") else f"{family}, {producers} producer(s)"
            print(f"\n{title} (median of the repetitions, {unit}; ratio to ours):")
            for variant, run in sorted(variants.items(), key=lambda v: v[0] != "ours"):
                ns, base = figure(run), figure(ours) if ours else None
                ratio = f"{ns / base:6.2f}x" if base else ""
                full = run.get("full_per_msg", 0.0)
                note = f"  full {full:.3f}/item" if full > 0 else ""
                print(f"  {variant:<22} {ns:9.1f}  {ratio}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
