#!/usr/bin/env python3
"""Checks src/executor/parking.pml, the model of parking against work
stealing, with spin: exhaustively, for two workers.

  parking_model.py MODEL WORK_DIR

Fourteen verifications, two at a time, each a complete search of the
model's state space:
  * as implemented (SLOT_CHECK), against mail, with one message against
    work postponed for lack of memory, and with one message against the
    governor standing a worker down (GOVERNOR), once and then back, and
    standing it down while a behaviour of it waits for that message's
    answer (BUSY), once and then back: no error, no assertion violated,
    no invalid end state;
  * without the registration's slot check, without a parking worker's
    look at the postponed flag, without a resting worker's wake-up of
    the worker covering it, without the covering registration's check
    of the count, without the pass that a change of the count holds,
    with a wake that takes the quiescence count back only after it has
    moved the state to running, and without a stood-down waiting
    worker's wake-up of the worker covering it or its look at the count
    after its registration step:
    spin must find the lost wake-up each time, which shows
    that the model can see the races it is about.
Exits 77 (skipped) when spin or a C compiler is missing (`./run setup`
installs spin)."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

SKIPPED = 77


def verify(model, work, defines):
    """Runs spin's verifier on `model` with `defines`; returns its report."""
    os.makedirs(work, exist_ok=True)
    subprocess.run(["spin", *defines, "-a", model], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    # -DSAFETY: safety properties only (assertions, invalid end states).
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-w", "-DSAFETY", "-o", "pan", "pan.c"],
                   cwd=work, check=True)
    run = subprocess.run(["./pan", "-m100000"], cwd=work, capture_output=True, text=True)
    return run.stdout + run.stderr


def errors(report):
    found = re.search(r"errors: (\d+)", report)
    if found is None:
        raise SystemExit(f"spin's verifier gave no result:\n{report}")
    return int(found.group(1))


def main(model, work):
    if shutil.which("spin") is None or shutil.which(os.environ.get("CC", "cc")) is None:
        print("spin or a C compiler is missing (./run setup installs spin): skipped")
        return SKIPPED
    model = os.path.abspath(model)
    shutil.rmtree(work, ignore_errors=True)

    postponed = ["-DPOSTPONED", "-DMESSAGES=1"]
    governed = ["-DGOVERNOR", "-DMESSAGES=1"]
    changed_back = [*governed, "-DCHANGES=2"]
    busy = [*governed, "-DBUSY"]
    busy_back = [*changed_back, "-DBUSY"]
    implemented = [(name, ["-DSLOT_CHECK", *defines]) for name, defines in (
        ("mail", []), ("postponed work", postponed), ("a worker resting", governed),
        ("a worker resting and running again", changed_back),
        ("a worker stood down while a behaviour of it waits", busy),
        ("a worker stood down while a behaviour of it waits, and running again", busy_back))]
    weakened = [
        ("the slot check", []),
        ("the postponed check", ["-DSLOT_CHECK", "-DNO_POSTPONED_CHECK", *postponed]),
        ("the resting worker's wake-up", ["-DSLOT_CHECK", "-DNO_REST_WAKE", *governed]),
        ("the covering registration's count check",
         ["-DSLOT_CHECK", "-DNO_COUNT_CHECK", *changed_back]),
        ("the pass held by a change of the count",
         ["-DSLOT_CHECK", "-DNO_CHANGE_PASS", *changed_back]),
        ("the count taken back before the state moves",
         ["-DSLOT_CHECK", "-DWAKE_EXCHANGE_FIRST"]),
        ("the stood-down waiting worker's wake-up",
         ["-DSLOT_CHECK", "-DNO_STOOD_DOWN_WAKE", *busy]),
        ("the stood-down waiting worker's look at the count",
         ["-DSLOT_CHECK", "-DNO_STOOD_DOWN_ABORT", *busy_back])]

    # Two at a time (each search runs on one core): the longest, the last
    # implemented one, starts first and the others run beside it.
    runs = [("implemented, " + name, defines) for name, defines in implemented]
    runs += [("without " + name, defines) for name, defines in weakened]
    longest = runs[len(implemented) - 1][0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        started = {title: pool.submit(verify, model, os.path.join(work, title), defines)
                   for title, defines in sorted(runs, key=lambda run: run[0] != longest)}
        reports = {title: started[title].result() for title, _ in runs}

    for name, _ in implemented:
        report = reports["implemented, " + name]
        states = re.search(r"([0-9.e+]+) states, stored", report)
        print(f"as implemented, {name}: {errors(report)} errors, "
              f"{states.group(1) if states else '?'} states")
        if errors(report) != 0 or "Search not completed" in report:
            print(report)
            print("FAILED: the parking protocol, as implemented, violates the model's property"
                  if errors(report) else "FAILED: the search did not complete")
            return 1

    for name, _ in weakened:
        report = reports["without " + name]
        print(f"without {name}: {errors(report)} errors")
        if errors(report) == 0 or "assertion violated" not in report:
            print(report)
            print(f"FAILED: without {name} spin should find the lost wake-up; "
                  "the model no longer sees the race it exists for")
            return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
