#!/usr/bin/env python3
"""Prints what transactional actors cost, from a Google Benchmark JSON file
of tact-transactional run with repetitions (medians of the repetitions):
per benchmark and worker count the median ns per message, the ratios of
tx_static_send to classic_static_send and to classic_value_send (all from
the same run), and the
collisions, retries, serializations and forwards per iteration of the
counter benchmarks."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402

CONTENTION = ("collisions", "retries", "serializations", "forwards")


def main(path):
    m = gbench_json.per_message_medians(path)
    if not m:
        return 0  # the name filter matched nothing here
    workers = sorted({w for by_workers in m.values() for w in by_workers})
    header = "".join(f"{'workers:' + w:>13}" for w in workers)
    print("\nmedian ns per message:")
    print(f"  {'benchmark':<24}{header}")
    for name in sorted(m):
        cells = "".join(
            f"{m[name][w]['per_msg'] * 1e9:13.1f}" if w in m[name] else f"{'-':>13}"
            for w in workers)
        print(f"  {name:<24}{cells}")

    tx = m.get("tx_static_send", {})
    for baseline in ("classic_static_send", "classic_value_send"):
        classic = m.get(baseline, {})
        shared = [w for w in workers if w in tx and w in classic]
        if shared:
            print(f"\ntx_static_send / {baseline} (same run):")
            for w in shared:
                t, c = tx[w]["per_msg"] * 1e9, classic[w]["per_msg"] * 1e9
                print(f"  workers:{w:<4} {t:8.1f} ns / {c:6.1f} ns = {t / c:6.2f}x")

    counters = sorted(name for name in m if name.startswith("tx_counter"))
    if counters:
        print("\ncounter benchmarks, per iteration (median; "
              f"{'/'.join(CONTENTION)}):")
        for name in counters:
            for w in workers:
                run = m[name].get(w)
                if run is None:
                    continue
                cells = "  ".join(f"{c} {run.get(c, 0):9.2f}" for c in CONTENTION)
                print(f"  {name:<22} workers:{w:<4} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
