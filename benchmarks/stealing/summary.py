#!/usr/bin/env python3
"""Prints what stealing gains, from a Google Benchmark JSON file of
tact-stealing run with repetitions: per workload and worker count, the
median time under each steal policy and its speed-up over `none` (medians
of interleaved runs, so machine drift hits every policy alike)."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402


def medians(path):
    found = {}
    for run in gbench_json.medians(path):
        # run_name: workload/policy/workers:N/iterations:K/real_time
        workload, policy, workers = run["run_name"].split("/")[:3]
        found[(workload, workers, policy)] = run["real_time"]  # milliseconds
    return found


def main(path):
    m = medians(path)
    if not m:
        return 0
    table = defaultdict(dict)
    for (workload, workers, policy), ms in m.items():
        table[(workload, workers)][policy] = ms
    print("\nmedian ms per run, and speed-up over stealing off (none):")
    for (workload, workers), by_policy in sorted(table.items()):
        base = by_policy.get("none")
        cells = []
        for policy in ("none", "random", "longest_victim", "locality"):
            if policy in by_policy:
                ms = by_policy[policy]
                gain = f" ({base / ms:.2f}x)" if base and policy != "none" else ""
                cells.append(f"{policy} {ms:.0f}{gain}")
        print(f"  {workload:<17} {workers:<10} " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
