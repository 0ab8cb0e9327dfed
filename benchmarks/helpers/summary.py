#!/usr/bin/env python3
"""Prints what ask and timers cost, from a Google Benchmark JSON file of
tact-helpers run with repetitions (medians of the repetitions): per
benchmark and worker count the median ns per round trip or per timer, and,
all from the same run, the ratios of the helping ask to the plain-blocking
baseline (ask_roundtrip_helping / ask_roundtrip_blocking), of an ask
inside a behaviour (suspending on a fiber) to the same round trips written
with a reply message (behaviour_ask / behaviour_callback), of the
transactional ask to the classic one, of transactional timers to classic
ones, and of a pipeline run by a sponsor on the calling thread to the same
pipeline on the pool."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gbench_json  # noqa: E402

RATIOS = (
    ("ask_roundtrip_helping", "ask_roundtrip_blocking", "ns per round trip"),
    ("behaviour_ask", "behaviour_callback", "ns per round trip"),
    ("tx_ask_roundtrip", "ask_roundtrip_helping", "ns per round trip"),
    ("tx_timer_throughput", "timer_throughput", "ns per timer"),
    ("pipeline_sponsor", "pipeline_pool", "ns per hop"),
)


def main(path):
    m = gbench_json.per_message_medians(path)
    if not m:
        return 0  # the name filter matched nothing here
    gbench_json.print_per_message_table(
        m, "median ns per round trip (ask), per timer (timers) or per hop (pipelines)")
    for name, baseline, unit in RATIOS:
        gbench_json.print_ratio(m, name, baseline, unit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
