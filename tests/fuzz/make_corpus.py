#!/usr/bin/env python3
"""The fuzz target's seed corpus, written as readable programs.

Usage: make_corpus.py write DIR      writes every seed program below into DIR
       make_corpus.py show FILE...   prints what inputs decode to

The byte layout is program.hpp's: a flags byte (bit 0: PCT; bits 1-2: PCT
depth - 1; bits 3-4: 256, 4, 2 or 1 queues; bit 5: local batch on), a
4-byte little-endian seed, then 4 bytes per operation (code, a, b, c). Seeds here are small programs that each reach one feature; the
fuzzer mutates and splices them. Findings worth keeping (a fixed engine
bug) are added to the corpus as they were found, not through this file.
"""
import pathlib
import struct
import sys

OPS = ["spawn_classic", "spawn_tx", "note", "relay", "boom", "tx_add", "tx_boom", "tx_pass",
       "ask_classic", "ask_tx", "timer_classic", "timer_tx", "cancel", "advance", "run_some",
       "run_all", "finish", "kill", "tx_release", "tx_to_nobody", "tx_unmatched", "stop"]
CODE = {name: i for i, name in enumerate(OPS)}
ANSWERS = {"now": 0, "never": 1, "fail": 2, "later": 3}


def ask(delay_tens, timeout_tens):
    """The c argument of an ask: delay and timeout in tens of milliseconds."""
    return (delay_tens & 7) | ((timeout_tens & 7) << 3)


def op(name, a=0, b=0, c=0):
    return bytes([CODE[name], a & 255, b & 255, c & 255])


QUEUES = {256: 0, 4: 1, 2: 2, 1: 3}


def program(seed, *ops, pct=False, depth=3, queues=256, local_batch=False):
    flags = (1 if pct else 0) | (((depth - 1) & 3) << 1) | (QUEUES[queues] << 3) | \
        (0x20 if local_batch else 0)
    return bytes([flags]) + struct.pack("<I", seed) + b"".join(ops)


P, S, PAR = "spawn_classic", "spawn_tx", 0
SER = 1

SEEDS = {
    # Classic actors: notes from the test, relays between probes.
    "notes": program(1, op(P), op(P), op("note", 0), op("note", 1), op("note", 0), op("run_all")),
    "relays": program(2, op(P), op(P), op(P), op("relay", 0, 1), op("relay", 1, 2),
                      op("relay", 2, 0), op("note", 1), op("relay", 0, 1), op("run_all")),
    "relay-to-self": program(3, op(P), op("relay", 0, 0), op("relay", 0, 0), op("run_some", 1)),
    "boom": program(4, op(P), op("note", 0), op("boom", 0), op("note", 0), op("run_all")),
    "finish-then-send": program(5, op(P), op(P), op("note", 0), op("finish", 0), op("note", 0),
                                op("relay", 1, 0), op("run_all"), op("note", 0)),
    "kill": program(6, op(P), op(P), op("note", 0), op("kill", 0), op("run_all"), op("note", 1)),
    "kill-with-relay-pending": program(7, op(P), op(P), op("relay", 0, 1), op("kill", 0, 1),
                                       op("run_some", 2), op("kill", 0)),
    # Probes in storage the test owns: destroy_msg, or destroyed by the test.
    "destroy": program(29, op(P, 1), op(P, 1), op("note", 0), op("relay", 1, 0), op("kill", 0),
                       op("run_all"), op("kill", 0), op("note", 1), op("run_all")),
    "finish-placed": program(30, op(P, 1), op("timer_classic", 0, 0, 1), op("finish", 0),
                             op("note", 0), op("run_all"), op("advance", 0, 0, 10)),
    # Asks of a probe, each way it can answer.
    "ask-now": program(8, op(P), op("note", 0), op("ask_classic", 0, ANSWERS["now"], ask(0, 1))),
    "ask-never": program(9, op(P), op("ask_classic", 0, ANSWERS["never"], ask(0, 1))),
    "ask-fail": program(10, op(P), op("ask_classic", 0, ANSWERS["fail"], ask(0, 1))),
    "ask-later-in-time": program(11, op(P), op("ask_classic", 0, ANSWERS["later"], ask(2, 3))),
    "ask-later-too-late": program(12, op(P), op("ask_classic", 0, ANSWERS["later"], ask(3, 1)),
                                  op("advance", 0, 0, 50), op("run_all")),
    "ask-finished": program(13, op(P), op("finish", 0), op("ask_classic", 0, 0, ask(0, 1)),
                            op("run_all"), op("ask_classic", 0, 0, ask(0, 1))),
    # Transactional actors.
    "tx-adds": program(14, op(S, PAR), op("tx_add", 0, 5), op("tx_add", 0, 250), op("tx_add", 0, 7),
                       op("run_all"), op("ask_tx", 0, 0, ask(0, 1))),
    "tx-serialized-order": program(15, op(S, SER), op("tx_add", 0, 1), op("tx_add", 0, 2),
                                   op("tx_add", 0, 3), op("run_some", 1), op("tx_add", 0, 4)),
    "tx-pass": program(16, op(S, PAR), op(S, SER), op("tx_pass", 0, 1, 9), op("tx_pass", 1, 0, 3),
                       op("tx_pass", 1, 1, 4), op("run_all")),
    "tx-boom": program(17, op(S, PAR), op(S, SER), op("tx_add", 0, 1), op("tx_boom", 0, 1),
                       op("tx_boom", 1, 1), op("tx_add", 1, 2), op("run_all")),
    "tx-ask-each-way": program(18, op(S, PAR), op("tx_add", 0, 3),
                               op("ask_tx", 0, ANSWERS["now"], ask(0, 1)),
                               op("ask_tx", 0, ANSWERS["never"], ask(0, 1)),
                               op("ask_tx", 0, ANSWERS["fail"], ask(0, 1)),
                               op("ask_tx", 0, ANSWERS["later"], ask(1, 2)),
                               op("ask_tx", 0, ANSWERS["later"], ask(4, 1)), op("advance", 0, 0, 60)),
    "tx-release": program(19, op(S, PAR), op(S, SER), op("tx_pass", 0, 1, 1), op("tx_release", 1),
                          op("tx_add", 0, 2), op("tx_release", 0), op("run_all")),
    "tx-dropped-and-unmatched": program(20, op(S, SER), op("tx_to_nobody"), op("tx_unmatched", 0),
                                        op("tx_add", 0, 1), op("run_all")),
    # Timers and the virtual clock.
    "timers": program(21, op(P), op(S, SER), op("timer_classic", 0, 0, 2), op("timer_tx", 0, 5, 1),
                      op("timer_classic", 0, 0, 1), op("advance", 0, 0, 7), op("run_all"),
                      op("advance", 0, 0, 10)),
    "cancel": program(22, op(P), op(S, PAR), op("timer_classic", 0, 0, 3), op("timer_tx", 0, 1, 3),
                      op("cancel", 0), op("advance", 0, 0, 20), op("cancel", 1), op("cancel", 1),
                      op("run_all")),
    "cancel-fired-undelivered": program(23, op(P), op("timer_classic", 0, 0, 1),
                                        op("advance", 0, 0, 5), op("cancel", 0), op("run_all")),
    "timer-after-pill": program(24, op(P), op("finish", 0), op("timer_classic", 0, 0, 1),
                                op("run_all"), op("timer_classic", 0, 0, 1),
                                op("advance", 0, 0, 10)),
    "timer-tie": program(25, op(P), op("timer_classic", 0, 0, 2), op("timer_classic", 0, 0, 2),
                         op("advance", 0, 0, 10), op("run_all")),
    # Everything at once, under both schedules.
    "mixed-random": program(26, op(P), op(S, SER), op(P), op(S, PAR), op("relay", 0, 1),
                            op("tx_pass", 0, 1, 3), op("ask_classic", 1, 3, ask(1, 2)),
                            op("timer_tx", 1, 4, 2), op("boom", 0), op("tx_boom", 1, 0),
                            op("finish", 1), op("run_some", 3), op("note", 1)),
    "mixed-pct": program(27, op(P), op(S, SER), op(P), op(S, PAR), op("relay", 0, 1),
                         op("tx_pass", 0, 1, 3), op("ask_classic", 1, 3, ask(1, 2)),
                         op("timer_tx", 1, 4, 2), op("boom", 0), op("tx_boom", 1, 0),
                         op("finish", 1), op("run_some", 3), op("note", 1), pct=True, depth=4),
    "shared-queues": program(31, op(P), op(S, SER), op(P), op(S, PAR), op("relay", 0, 2),
                             op("relay", 2, 0), op("tx_pass", 1, 3, 2), op("tx_add", 3, 1),
                             op("note", 2), op("finish", 0), op("relay", 2, 0), op("run_all"),
                             queues=2),
    "one-queue-local-batch": program(32, op(P), op(P), op(S, SER), op("relay", 0, 1),
                                     op("relay", 1, 0), op("relay", 0, 0), op("tx_add", 0, 1),
                                     op("note", 1), op("run_some", 2), op("kill", 1), op("run_all"),
                                     queues=1, local_batch=True),
    "eight-actors": program(28, *[op(P if i % 2 == 0 else S, i) for i in range(9)],
                            *[op("relay", i, i + 1) for i in range(4)],
                            *[op("tx_pass", i, i + 1, i) for i in range(4)], op("run_all")),
}


def show(data):
    """One line per operation, as program.cpp decodes them."""
    byte = lambda i: data[i] if i < len(data) else 0
    flags = byte(0)
    seed = struct.unpack("<I", bytes(byte(i) for i in range(1, 5)))[0]
    kind = f"pct depth {1 + ((flags >> 1) & 3)}" if flags & 1 else "random"
    queues = [256, 4, 2, 1][(flags >> 3) & 3]
    batch = ", local batch" if flags & 0x20 else ""
    lines = [f"schedule {kind}, seed {seed}, {queues} queues{batch}"]
    for at in range(5, len(data), 4):
        if len(lines) > 64:
            break
        code = byte(at) % len(OPS)
        if OPS[code] == "stop":
            lines.append("stop")
            break
        lines.append(f"{OPS[code]}(a={byte(at + 1)}, b={byte(at + 2)}, c={byte(at + 3)})")
    return "\n".join(lines)


def main(argv):
    if len(argv) == 3 and argv[1] == "write":
        out = pathlib.Path(argv[2])
        out.mkdir(parents=True, exist_ok=True)
        for name, data in SEEDS.items():
            (out / name).write_bytes(data)
        return 0
    if len(argv) >= 3 and argv[1] == "show":
        for path in argv[2:]:
            print(f"== {path}\n{show(pathlib.Path(path).read_bytes())}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
