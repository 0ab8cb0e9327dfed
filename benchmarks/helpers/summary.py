#!/usr/bin/env python3
"""Prints what ask and timers cost, from a Google Benchmark JSON file of
tact-helpers run with repetitions (medians of the repetitions): per
benchmark and worker count the median ns per round trip or per timer, and,
all from the same run, the ratios of the helping ask to the plain-blocking
baseline (ask_roundtrip_helping / ask_roundtrip_blocking), of the
transactional ask to the classic one, of transactional timers to classic
ones, and of a pipeline run by a sponsor on the calling thread to the same
pipeline on the pool."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402

RATIOS = (
    ("ask_roundtrip_helping", "ask_roundtrip_blocking", "ns per round trip"),
    ("tx_ask_roundtrip", "ask_roundtrip_helping", "ns per round trip"),
    ("tx_timer_throughput", "timer_throughput", "ns per timer"),
    ("pipeline_sponsor", "pipeline_pool", "ns per hop"),
)


def main(path):
    m = gbench_json.per_message_medians(path)
    if not m:
        return 0  # the name filter matched nothing here
    workers = sorted({w for by_workers in m.values() for w in by_workers})
    header = "".join(f"{'workers:' + w:>13}" for w in workers)
    print("\nmedian ns per round trip (ask) or per timer (timers):")
    print(f"  {'benchmark':<24}{header}")
    for name in sorted(m):
        cells = "".join(
            f"{m[name][w]['per_msg'] * 1e9:13.1f}" if w in m[name] else f"{'-':>13}"
            for w in workers)
        print(f"  {name:<24}{cells}")

    for name, baseline, unit in RATIOS:
        a, b = m.get(name, {}), m.get(baseline, {})
        shared = [w for w in workers if w in a and w in b]
        if not shared:
            continue
        print(f"\n{name} / {baseline} (same run, {unit}):")
        for w in shared:
            x, y = a[w]["per_msg"] * 1e9, b[w]["per_msg"] * 1e9
            print(f"  workers:{w:<4} {x:8.1f} ns / {y:8.1f} ns = {x / y:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
