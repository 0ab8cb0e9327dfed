#!/usr/bin/env python3
"""Drives a GUI example as a person would: starts an X server of its own
(Xvfb), launches the example, clicks its buttons (where the example says
they are) and presses its keys, and reads the answers back from the
window titles, which the examples' actors set. Waits by polling,
with deadlines long enough for a loaded machine: a deadline that passes
means something is stuck, not slow. Exits 77 (skipped) when no X server
can be started.

Usage: drive.py compute|router EXECUTABLE"""
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIPPED = 77
# How long one step may take before the test calls it stuck.
STUCK = 120.0
POLL = 0.05


class Failure(Exception):
    pass


def skip(reason):
    print(f"skipped: {reason}")
    sys.exit(SKIPPED)


class XServer:
    """An Xvfb of our own, on a display number it picks (-displayfd), so
    that tests running side by side do not collide. -noreset: by default
    an X server resets when its last client leaves, and a client that
    connects meanwhile is refused; each xdotool call is a client that
    comes and goes, racing the example's own connection."""

    def __init__(self, workdir):
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            skip("no Xvfb to start an X server with (`./run setup gui` installs it)")
        self.log_path = os.path.join(workdir, "xvfb.log")
        read_end, write_end = os.pipe()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [xvfb, "-displayfd", str(write_end), "-screen", "0", "1024x768x24",
                 "-nolisten", "tcp", "-noreset"],
                pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(write_end)
        number = b""
        deadline = time.monotonic() + STUCK
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read_end], [], [], 0.5)
            if ready:
                chunk = os.read(read_end, 16)
                if not chunk:
                    break
                number += chunk
        os.close(read_end)
        if not number.strip().isdigit():
            self.stop()
            with open(self.log_path, errors="replace") as log:
                tail = log.read()[-2000:]
            skip(f"Xvfb could not start an X server:\n{tail}")
        self.display = ":" + number.decode().strip()

    def report(self):
        """For a failure: the X server's display, state and log."""
        state = "running" if self.proc.poll() is None else f"exited ({self.proc.returncode})"
        with open(self.log_path, errors="replace") as log:
            return f"X server {self.display}, {state}; its log:\n{log.read()[-4000:]}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Session:
    """The example running on the X server, and xdotool to drive it."""

    def __init__(self, executable, args, display, workdir):
        if shutil.which("xdotool") is None:
            raise Failure("xdotool is missing (`./run setup gui` installs it)")
        runtime = os.path.join(workdir, "runtime")
        os.mkdir(runtime, 0o700)
        # Where an example that has buttons to click writes their places.
        self.layout_path = os.path.join(workdir, "layout")
        self.env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                        XDG_RUNTIME_DIR=runtime, TACT_GUI_LAYOUT=self.layout_path)
        self.err_path = os.path.join(workdir, "example.stderr")
        with open(self.err_path, "wb") as err:
            self.app = subprocess.Popen([executable, *args], env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=err, stderr=err)

    def xdotool(self, *args, check=False):
        try:
            run = subprocess.run(["xdotool", *args], env=self.env, capture_output=True,
                                 text=True, timeout=STUCK)
        except subprocess.TimeoutExpired:
            raise Failure(f"xdotool {' '.join(args)} hung for {STUCK:.0f} s")
        if run.returncode != 0 and check:
            raise Failure(f"xdotool {' '.join(args)} failed: {run.stderr.strip()}")
        return run.returncode, run.stdout.strip()

    def stderr(self):
        with open(self.err_path, errors="replace") as err:
            return err.read()

    def alive(self, doing):
        if self.app.poll() is not None:
            raise Failure(f"the example exited ({self.app.returncode}) while {doing}")

    def window(self, name):
        """The id of the window whose title starts with `name`, once shown."""
        deadline = time.monotonic() + STUCK
        while time.monotonic() < deadline:
            self.alive(f"waiting for its window '{name}'")
            rc, out = self.xdotool("search", "--onlyvisible", "--name", "^" + re.escape(name))
            if rc == 0 and out:
                return out.split()[0]
            time.sleep(POLL)
        raise Failure(f"no window '{name}' appeared within {STUCK:.0f} s")

    def title(self, wid):
        rc, out = self.xdotool("getwindowname", wid)
        return out if rc == 0 else ""

    def await_title(self, wid, pattern):
        """Polls the title of `wid` until it matches `pattern` (a regular
        expression); returns the match."""
        deadline = time.monotonic() + STUCK
        last = ""
        while time.monotonic() < deadline:
            self.alive(f"waiting for a title matching '{pattern}'")
            last = self.title(wid)
            match = re.search(pattern, last)
            if match:
                print(f"  title: {last}")
                return match
            time.sleep(POLL)
        raise Failure(f"the title never matched '{pattern}' within {STUCK:.0f} s; "
                      f"it reads '{last}'")

    def press(self, wid, *keys):
        """Gives `wid` the keyboard, then types `keys` (xdotool key names)."""
        print(f"  keys: {' '.join(keys)}")
        self.xdotool("windowfocus", "--sync", wid, check=True)
        self.xdotool("key", "--delay", "50", *keys, check=True)

    def button(self, name):
        """The centre of button `name` in its window, from the layout the
        example writes once it is shown."""
        deadline = time.monotonic() + STUCK
        while time.monotonic() < deadline:
            self.alive(f"waiting for the place of button '{name}'")
            if os.path.exists(self.layout_path):
                with open(self.layout_path) as layout:
                    for line in layout:
                        label, x, y = line.split()
                        if label == name:
                            return x, y
                raise Failure(f"the example's layout has no button '{name}'")
            time.sleep(POLL)
        raise Failure(f"the example wrote no layout within {STUCK:.0f} s")

    def click(self, wid, name):
        """Moves the pointer onto button `name` of `wid` and clicks it."""
        x, y = self.button(name)
        print(f"  clicks: {name} at {x},{y}")
        self.xdotool("mousemove", "--sync", "--window", wid, x, y, check=True)
        self.xdotool("click", "1", check=True)

    def type(self, wid, text):
        print(f"  types: {text}")
        self.xdotool("windowfocus", "--sync", wid, check=True)
        self.xdotool("type", "--delay", "50", text, check=True)

    def quit(self, wid):
        """Ctrl+Q, then the example must exit cleanly, reporting nothing."""
        self.press(wid, "ctrl+q")
        try:
            status = self.app.wait(timeout=STUCK)
        except subprocess.TimeoutExpired:
            raise Failure(f"the example did not exit within {STUCK:.0f} s of Ctrl+Q")
        if status != 0:
            raise Failure(f"the example exited with status {status}")
        reports = [line for line in self.stderr().splitlines() if line.startswith("tact:")]
        if reports:
            raise Failure("tact reported:\n" + "\n".join(reports))

    def stop(self):
        if self.app.poll() is None:
            self.app.kill()
            self.app.wait()


def drive_compute(s):
    """Watches the live plot settle, counts primes and sees the plot show
    the work, moves the limit slider and counts again, then cancels a long
    count: the window answers while the workers are busy. Then floods the
    GUI thread with reports and moves the slider meanwhile: the window
    answers while the flood lasts, and counts every report once. The title
    ends with the flood's progress, "[flood: N of M]" ("[flood: M of M in
    S s]" once over), if one was started, and what the plot drew last:
    "[plot: W workers, S s, peak P/s]"."""
    w = s.window("tact compute")
    s.await_title(w, r"ready, primes below 10000000 in 16 chunks \[plot: ")
    # Ten seconds of samples, and none of them from a busy worker: the
    # plot is drawn again and again as time passes (the start-up's
    # messages scroll out of it).
    idle = s.await_title(w, r"\[plot: (\d+) workers?, 10 s, peak 0/s\]$")
    workers = idle.group(1)
    if int(workers) < 1:
        raise Failure(f"the plot shows {workers} workers")
    s.click(w, "count")
    s.await_title(w, r": 664579 primes below 10000000 \(")
    # The same workers' lines, now showing the count's messages.
    s.await_title(w, rf"\[plot: {workers} workers?, 10 s, peak [1-9]\d*/s\]$")
    s.press(w, "alt+l", "Right")  # the limit slider, one step (a million) up
    s.await_title(w, r"ready, primes below 11000000 in 16 chunks \[plot: ")
    s.press(w, "alt+c")
    s.await_title(w, r": 726517 primes below 11000000 \(")
    # A count that takes seconds, in many chunks, cancelled while it runs.
    s.press(w, "alt+l", "End", "alt+h", "End")
    s.await_title(w, r"ready, primes below 2000000000 in 1024 chunks \[plot: ")
    s.press(w, "alt+c")
    s.await_title(w, r"counting primes below 2000000000 \[plot: ")
    s.click(w, "cancel")
    s.await_title(w, r"cancelled at \d+ of 1024 chunks \[plot: ")
    # Two million reports to the dashboard, which runs them on the GUI
    # thread, one by one, for seconds. Seen in progress (no time taken
    # yet), the window is asked something: the slider's answer must come
    # while the flood is still on, not once it is over.
    s.click(w, "flood")
    s.await_title(w, r"\[flood: \d+ of 2000000\] \[plot: ")
    s.press(w, "alt+l", "Home")
    answer = s.await_title(w, r"ready, primes below 1000000 in 1024 chunks \[flood: ([^]]*)\]")
    if not re.fullmatch(r"\d+ of 2000000", answer.group(1)):
        raise Failure(f"the window answered only once the flood was over ({answer.group(1)})")
    # Every report counted once: "twice" would say otherwise.
    s.await_title(w, r"\[flood: 2000000 of 2000000 in \d+\.\d+ s\] \[plot: ")
    s.quit(w)


def drive_router(s):
    """Publishes from the control window to both displays, unsubscribes one
    display from a topic, and publishes again."""
    control = s.window("tact router: control")
    first = s.window("tact router: display 1")
    second = s.window("tact router: display 2")
    # Subscribed (the router answered both displays).
    for d in (first, second):
        s.await_title(d, r"\[level: \(none\)\] \[message: \(none\)\]$")
    s.press(control, "alt+m")
    s.type(control, "hello")
    s.press(control, "Return")
    for d in (first, second):
        s.await_title(d, r"\[message: hello\]$")
    s.press(second, "alt+m")  # display 2 leaves the topic "message"
    s.await_title(second, r"\[message: off\]$")
    s.press(control, "alt+m", "ctrl+a")  # the text field, all of its text
    s.type(control, "bye")
    s.press(control, "Return")
    s.await_title(first, r"\[message: bye\]$")
    # The router handled the publication before display 1 heard of it, so
    # display 2, unsubscribed first, has not been sent it.
    title = s.title(second)
    if not title.endswith("[message: off]"):
        raise Failure(f"display 2, unsubscribed, shows '{title}'")
    s.press(control, "alt+l", "Right", "Right", "Right")  # the level slider to 3
    for d in (first, second):
        s.await_title(d, r"\[level: 3\]")
    s.quit(control)


def main(scenario, executable):
    drive = {"compute": drive_compute, "router": drive_router}[scenario]
    args = {"compute": ["--n", "10000000", "--chunks", "16", "--counters", "4",
                        "--flood", "2000000"],
            "router": []}[scenario]
    with tempfile.TemporaryDirectory(prefix="tact-gui-") as workdir:
        server = XServer(workdir)
        print(f"X server on {server.display}")
        session = None
        started = time.monotonic()
        try:
            session = Session(executable, args, server.display, workdir)
            drive(session)
        except Failure as failure:
            print(f"FAILED: {failure}")
            if session is not None:
                print("example's stderr:\n" + session.stderr())
            print(server.report())
            return 1
        finally:
            if session is not None:
                session.stop()
            server.stop()
        print(f"{scenario}: passed in {time.monotonic() - started:.1f} s")
        return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
