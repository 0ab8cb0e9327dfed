"""Reading the JSON file Google Benchmark writes (--benchmark_out), for the
summary scripts of the benchmark executables."""
import json
from collections import defaultdict


def runs(path):
    """The file's runs, or none when the name filter matched nothing here
    (Google Benchmark then leaves the file empty)."""
    with open(path) as f:
        text = f.read()
    return json.loads(text)["benchmarks"] if text.strip() else []


def medians(path):
    """The median aggregates of a run with repetitions."""
    return [run for run in runs(path) if run.get("aggregate_name") == "median"]


def per_message_medians(path):
    """{benchmark: {workers: median run}} for the runs that report per_msg
    (run names: benchmark/workers:N[/iterations:K]/real_time)."""
    found = defaultdict(dict)
    for run in medians(path):
        if "per_msg" not in run:
            continue
        parts = run["run_name"].split("/")
        workers = next((p.split(":")[1] for p in parts if p.startswith("workers:")), "-")
        found[parts[0]][workers] = run
    return found


def worker_counts(by_benchmark):
    """The worker counts present in a per_message_medians() result."""
    return sorted({w for by_workers in by_benchmark.values() for w in by_workers})


def print_per_message_table(by_benchmark, title):
    """One row per benchmark, one column per worker count, in ns."""
    workers = worker_counts(by_benchmark)
    header = "".join(f"{'workers:' + w:>13}" for w in workers)
    print(f"\n{title}:")
    print(f"  {'benchmark':<24}{header}")
    for name in sorted(by_benchmark):
        row = by_benchmark[name]
        cells = "".join(f"{row[w]['per_msg'] * 1e9:13.1f}" if w in row else f"{'-':>13}"
                        for w in workers)
        print(f"  {name:<24}{cells}")


def print_ratio(by_benchmark, name, baseline, unit):
    """name / baseline per worker count both ran at, from the same run."""
    a, b = by_benchmark.get(name, {}), by_benchmark.get(baseline, {})
    shared = [w for w in worker_counts(by_benchmark) if w in a and w in b]
    if not shared:
        return
    print(f"\n{name} / {baseline} (same run, {unit}):")
    for w in shared:
        x, y = a[w]["per_msg"] * 1e9, b[w]["per_msg"] * 1e9
        print(f"  workers:{w:<4} {x:8.1f} ns / {y:8.1f} ns = {x / y:6.2f}x")
