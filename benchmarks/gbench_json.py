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
