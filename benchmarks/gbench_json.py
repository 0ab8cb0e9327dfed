"""Reading the JSON file Google Benchmark writes (--benchmark_out), for the
summary scripts of the benchmark executables."""
import json


def runs(path):
    """The file's runs, or none when the name filter matched nothing here
    (Google Benchmark then leaves the file empty)."""
    with open(path) as f:
        text = f.read()
    return json.loads(text)["benchmarks"] if text.strip() else []


def medians(path):
    """The median aggregates of a run with repetitions."""
    return [run for run in runs(path) if run.get("aggregate_name") == "median"]
