# SPDX-License-Identifier: Apache-2.0

"""Helpers shared by the bench harnesses (stdlib only)."""

import os
import signal
import subprocess
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def now_ns():
    """CLOCK_REALTIME in ns: the clock toggle.c and netpathctl's --bench-snapshots use."""
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def in_ns(namespace, argv):
    """argv run inside a named network namespace. `ip netns exec` execs argv, so the PID that
    Popen returns is the listener's own (its /proc entry is what we read)."""
    return ["ip", "netns", "exec", namespace] + list(argv)


class LineReader(threading.Thread):
    """Reads a pipe in its own thread and timestamps each line when the read that carried it
    returns. Every listener is read by this same class, so reading costs the same for all."""

    def __init__(self, fd, name, keep_lines=True, watch=None, on_line=None):
        super().__init__(name=name, daemon=True)
        self.on_line = on_line  # optional callable(arrival_ns, line), run in this thread
        self.fd = fd
        self.keep_lines = keep_lines
        self.watch = watch  # optional bytes: record the arrival of the first line containing it
        self.watch_ns = None
        self.watched = threading.Event()
        self.lines = []  # (arrival_ns, line bytes)
        self.count = 0
        self.first_line = threading.Event()

    def run(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            arrival = now_ns()
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                self.count += 1
                if self.keep_lines:
                    self.lines.append((arrival, line))
                if self.watch is not None and self.watch_ns is None and self.watch in line:
                    self.watch_ns = arrival
                    self.watched.set()
                if self.on_line is not None:
                    self.on_line(arrival, line)
            if complete:
                self.first_line.set()
        self.first_line.set()


def agent_work(path):
    """A work directory and its hooks.d for a netpathd the harness starts, both 0755 (the agent
    refuses a hooks directory others may write); returns their absolute paths."""
    work = os.path.abspath(path)
    hooks_dir = os.path.join(work, "hooks.d")
    os.makedirs(hooks_dir, exist_ok=True)
    os.chmod(work, 0o755)
    os.chmod(hooks_dir, 0o755)
    return work, hooks_dir


def spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    return subprocess.Popen(argv, stdout=stdout, stderr=stderr, bufsize=0)


def stop(proc, timeout=5):
    """SIGTERM, then SIGKILL, this one process (never by name)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_ticks(pid):
    """utime + stime of all the process's threads, in clock ticks (/proc/PID/stat fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name may contain spaces: split after its closing parenthesis.
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def ticks_to_ms(ticks):
    return ticks * 1000.0 / CLK_TCK


def status_kib(pid, key):
    """A kB field of /proc/PID/status, e.g. VmRSS or VmHWM."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


class MachineLoad:
    """How busy all CPUs were between start() and stop(), from /proc/stat: our own processes
    included, so a figure well above what the phase itself needs means others were running."""

    @staticmethod
    def _sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + fields[4]  # idle + iowait
        return sum(fields) - idle, sum(fields)

    def start(self):
        self.begin = self._sample()
        with open("/proc/loadavg") as f:
            self.loadavg_before = float(f.read().split()[0])
        return self

    def stop(self):
        busy, total = self._sample()
        with open("/proc/loadavg") as f:
            loadavg_after = float(f.read().split()[0])
        return {
            "busy_pct": 100.0 * (busy - self.begin[0]) / max(1, total - self.begin[1]),
            "loadavg_before": self.loadavg_before,
            "loadavg_after": loadavg_after,
        }


def pss_kib(pid):
    """Proportional set size: shared library pages divided among the processes mapping them."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    raise KeyError("Pss")


def percentile(sorted_values, p):
    """Nearest-rank percentile (p in 0..100) of an already sorted list."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def median(sorted_values):
    n = len(sorted_values)
    if n == 0:
        return None
    mid = n // 2
    return sorted_values[mid] if n % 2 else (sorted_values[mid - 1] + sorted_values[mid]) / 2
