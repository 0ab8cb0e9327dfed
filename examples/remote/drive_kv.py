#!/usr/bin/env python3
"""Runs the key-value example as a user would: keys made with tact-keygen,
an allow-list for each node, the service started, the client run against
it, then the service stopped with SIGTERM. Checks what the client prints.

    drive_kv.py TACT_KEYGEN SERVICE CLIENT
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(keygen, service, client):
    with tempfile.TemporaryDirectory() as home:
        lines = {}
        for name in ("db1", "cli"):
            made = subprocess.run([keygen, name, home], check=True, capture_output=True, text=True)
            lines[name] = made.stdout.strip()
        at = {name: "tcp://127.0.0.1:%d" % free_port() for name in lines}
        # Each node lists the other, with the address it listens at.
        for me, other in (("db1", "cli"), ("cli", "db1")):
            with open(os.path.join(home, me + ".peers"), "w") as f:
                f.write("# name public-key address\n%s %s\n" % (lines[other], at[other]))

        def args(name):
            return [os.path.join(home, name + ".key"), os.path.join(home, name + ".peers"), at[name]]

        server = subprocess.Popen([service] + args("db1"), stdout=subprocess.PIPE, text=True)
        try:
            banner = server.stdout.readline()
            print(banner, end="")
            if not banner.startswith("kv service at "):
                return 1
            asked = subprocess.run([client] + args("cli") + ["db1", "a=1", "b=2", "a=3", "a", "b", "c"],
                                   capture_output=True, text=True)
            print(asked.stdout, end="")
            print(asked.stderr, end="", file=sys.stderr)
            expected = "a = 3\nb = 2\nc is not in the store\n"
            if asked.returncode != 0 or asked.stdout != expected:
                print("expected:\n" + expected, file=sys.stderr)
                return 1
        finally:
            server.send_signal(signal.SIGTERM)
            rest, _ = server.communicate()
            print(rest, end="")
        return 0 if server.returncode == 0 and rest == "served 6 messages\n" else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
