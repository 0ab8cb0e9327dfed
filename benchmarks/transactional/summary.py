#!/usr/bin/env python3
"""Prints what transactional actors cost, from a Google Benchmark JSON file
of tact-transactional run with repetitions (medians of the repetitions):
per benchmark and worker count the median ns per message, the ratios of
tx_static_send to classic_static_send and to classic_value_send, and of the
become benchmarks to tx_static_send (all from the same run), and the
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
    gbench_json.print_per_message_table(m, "median ns per message")
    for baseline in ("classic_static_send", "classic_value_send"):
        gbench_json.print_ratio(m, "tx_static_send", baseline, "ns per message")
    for name in ("tx_become_parallel", "tx_become_serialized"):
        gbench_json.print_ratio(m, name, "tx_static_send", "ns per message")

    counters = sorted(name for name in m if name.startswith("tx_counter"))
    if counters:
        print("\ncounter benchmarks, per iteration (median; "
              f"{'/'.join(CONTENTION)}):")
        for name in counters:
            for w in gbench_json.worker_counts(m):
                run = m[name].get(w)
                if run is None:
                    continue
                cells = "  ".join(f"{c} {run.get(c, 0):9.2f}" for c in CONTENTION)
                print(f"  {name:<22} workers:{w:<4} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
