#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""A route storm against one listener: CPU, peak RSS, overruns, and when it caught up.

In a namespace with an addressed link (--via reachable), the listener starts and loads its
initial dump; then `ip -batch` adds --routes /32 routes counting up from 198.18.0.1 (RFC 2544
benchmark space, and on past it for a million) via --via, and last a default route in table
4242 (MARKER): a route netpathd keeps, so the listener publishes a snapshot once it has read
the whole batch. Measured:
  cpu_ms      listener's utime+stime (/proc/PID/stat, all threads) from just before `ip -batch`
              starts until 1 s after the listener caught up;
  peak RSS    VmHWM (/proc/PID/status) at the end; reset to the current RSS just before the
              batch (`5` to /proc/PID/clear_refs), so it is the storm's own peak, and
              peak_above_idle_kib is that minus VmRSS just before the batch;
  caught up   from the moment `ip -batch` exited to the moment the listener had read the whole
              batch: for netpathctl, the emitted_ns of the first --bench-snapshots line whose
              route count holds the marker (monitor prints the line on receiving the classified
              state, before diffing it). The marker is the batch's last route, and every /32
              before it was either dropped by the kernel for the engine's socket filter or read
              and dropped unparsed ahead of it, in order;
              for ip monitor, the arrival of the line announcing the marker route. Negative means
              it had everything before `ip -batch` had even exited;
  overruns    netpathctl: EngineStatistics.overruns; ip monitor: "No buffer space" errors it printed.
Run it once per listener, each in a fresh namespace. Writes JSON to --out.
"""

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from common import LineReader, MachineLoad, cpu_ticks, in_ns, now_ns, spawn, status_kib, stop, ticks_to_ms

FIRST = ipaddress.IPv4Address("198.18.0.1")
MARKER = 4242


def write_batch(path, routes, via):
    with open(path, "w") as f:
        for i in range(routes):
            f.write(f"route add {FIRST + i}/32 via {via}\n")
        f.write(f"route add default via {via} table {MARKER}\n")


class Snapshots:
    """The --bench-snapshots lines, parsed once each as they arrive (in the reader's thread, so
    waiting for one costs the harness no polling CPU while the listener works)."""

    def __init__(self):
        self.all = []
        self.target = None
        self.first = threading.Event()
        self.reached = threading.Event()
        self.other = []

    def on_line(self, arrival, line):
        if not line.startswith(b"{"):
            self.other.append(line)
            return
        snap = json.loads(line)
        self.all.append(snap)
        self.first.set()
        if self.target is not None and snap["route_count"] >= self.target:
            self.reached.set()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--listener", choices=["netpathctl", "ip"], required=True)
    ap.add_argument("--netpathctl")
    ap.add_argument("--routes", type=int, default=100_000)
    ap.add_argument("--via", default="192.0.2.2")
    ap.add_argument("--timeout", type=float, default=300.0, help="give up waiting for the last route after this")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    batch = tempfile.NamedTemporaryFile(prefix="netpath-storm-", suffix=".batch", delete=False)
    batch.close()
    write_batch(batch.name, args.routes, args.via)

    if args.listener == "netpathctl":
        argv = [args.netpathctl, "monitor", "--local", "--json", "--bench-snapshots"]
        name = "netpathctl monitor"
    else:
        # The groups netpathctl subscribes to; text output, as `ip monitor` prints by default.
        argv = ["ip", "monitor", "link", "address", "route"]
        name = "ip monitor"
    proc = spawn(in_ns(args.ns, argv))
    snaps = Snapshots()
    out = LineReader(proc.stdout.fileno(), "stdout", keep_lines=False, watch=f"table {MARKER}".encode())
    err = LineReader(proc.stderr.fileno(), "stderr", keep_lines=args.listener == "ip",
                     on_line=snaps.on_line if args.listener == "netpathctl" else None)
    out.start()
    err.start()
    result = {"listener": name, "routes": args.routes}
    try:
        if args.listener == "netpathctl":
            if not snaps.first.wait(15):
                sys.exit("netpathctl monitor did not start: " + b"\n".join(snaps.other).decode())
            baseline = snaps.all[0]["route_count"]
        time.sleep(2.0)  # idle a moment; let the initial dump's garbage settle
        if proc.poll() is not None:
            sys.exit(f"{name} exited early with status {proc.returncode}")

        if args.listener == "netpathctl":
            # The routes held before the batch, then the marker: a default route, which is kept.
            baseline_messages = snaps.all[-1]["messages"]
            target = snaps.all[-1]["route_count"] + 1
            snaps.target = target
        hwm_before = status_kib(proc.pid, "VmHWM")
        rss_before = status_kib(proc.pid, "VmRSS")
        with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
            f.write("5")  # VmHWM := VmRSS: the peak measured from here on is the storm's
        cpu_before = cpu_ticks(proc.pid)
        load = MachineLoad().start()
        start_ns = now_ns()
        subprocess.run(in_ns(args.ns, ["ip", "-batch", batch.name]), check=True)
        end_ns = now_ns()

        caught = (snaps.reached if args.listener == "netpathctl" else out.watched).wait(args.timeout)
        time.sleep(1.0)  # include whatever work trails the last route in the CPU figure
        cpu_after = cpu_ticks(proc.pid)
        result["machine_load"] = load.stop()
        result.update({
            "batch_ms": (end_ns - start_ns) / 1e6,
            "cpu_ms": ticks_to_ms(cpu_after - cpu_before),
            "cpu_us_per_route": ticks_to_ms(cpu_after - cpu_before) * 1000.0 / args.routes,
            "hwm_before_kib": hwm_before,
            "rss_before_kib": rss_before,
            "peak_rss_kib": status_kib(proc.pid, "VmHWM"),
            "peak_above_idle_kib": status_kib(proc.pid, "VmHWM") - rss_before,
            "rss_after_kib": status_kib(proc.pid, "VmRSS"),
            "caught_up": caught,
        })
        if args.listener == "netpathctl":
            final = next((s for s in snaps.all if s["route_count"] >= target), None)
            last_snap = snaps.all[-1]
            during = [s for s in snaps.all if s["received_at"] >= start_ns]
            result.update({
                "initial_route_count": baseline,
                "final_route_count": last_snap["route_count"],
                "messages_before": baseline_messages,
                "skipped_routes": last_snap.get("skipped_routes"),
                "caught_up_ms": (final["emitted_ns"] - end_ns) / 1e6 if final else None,
                "applied_ms": (final["received_at"] - end_ns) / 1e6 if final else None,
                "snapshots_during_storm": len(during),
                "messages": last_snap["messages"],
                "overruns": last_snap["overruns"],
                "resyncs": last_snap["resyncs"],
            })
        else:
            result.update({
                "caught_up_ms": (out.watch_ns - end_ns) / 1e6 if out.watch_ns else None,
                "lines": out.count,
                "overruns": sum(1 for _, l in err.lines if b"No buffer space" in l),
            })
        if proc.poll() is not None:
            sys.exit(f"{name} exited during the storm with status {proc.returncode}")
    finally:
        stop(proc)
        os.unlink(batch.name)

    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"storm {name}: " + json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
