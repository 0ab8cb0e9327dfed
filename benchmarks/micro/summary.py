#!/usr/bin/env python3
"""Prints the ratios the project's performance bar is stated in, from a
Google Benchmark JSON file of tact-micro run with repetitions: medians of
interleaved runs, so machine drift hits every benchmark alike."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402


def medians(path):
    return {run["run_name"]: run["per_msg"] * 1e9  # seconds -> ns
            for run in gbench_json.medians(path) if "per_msg" in run}


def main(path):
    m = medians(path)
    floor = m.get("raw_floor")
    if floor is None:
        return 0  # the floor was filtered out: nothing to compare against
    print(f"\nmedian ns per message (ratio to the raw floor of {floor:.2f} ns):")
    for name, ns in sorted(m.items()):
        if name != "raw_floor":
            print(f"  {name:<48} {ns:8.2f} ns  {ns / floor:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
