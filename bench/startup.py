#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Start-up with a large route table: netpathd's time to READY=1 and its idle RSS.

Two namespaces are set up alike, each with an addressed link (--via reachable) and a default
route; `ip -batch` adds --routes /32 routes to --ns (the batch is not timed) and --empty-ns keeps
its few routes. netpathd then starts --starts times in each, in turn (empty, full, empty, …), with
an empty hooks directory, no startup events and a NOTIFY_SOCKET this harness listens on, and each
start is measured:
  ready_ms   from just before the exec to the arrival of its READY=1 datagram;
  rss        VmRSS, RssAnon, RssFile and VmHWM --idle seconds after READY=1, and the CPU it
             used until then (utime+stime, all threads).
Why several starts, in turn: a single start's VmRSS moves by ±0.6 MB from one start to the next
with the same binary and the same table (how many pages of the shared code the kernel's
fault-around maps), more than the 256 KiB the table may cost. Each of "without" and "with" is
the median of its starts, field by field, except ready_ms, which is the slowest start; "starts"
keeps every start. Writes JSON to --out.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from common import cpu_ticks, in_ns, median, now_ns, status_kib, ticks_to_ms
from storm import write_batch


def config(work):
    hooks = os.path.join(work, "hooks.d")
    os.makedirs(hooks, exist_ok=True)
    os.chmod(work, 0o755)
    os.chmod(hooks, 0o755)
    path = os.path.join(work, "netpathd.toml")
    with open(path, "w") as f:
        f.write("# bench/startup.py: no hooks, no startup events.\n"
                "[agent]\n"
                f'hooks_dir = "{hooks}"\n'
                "startup_events = false\n"
                'metrics = ""\n')
    return path


def start_once(args, ns, work, label):
    notify_path = os.path.join(work, f"notify-{label}.sock")
    if os.path.exists(notify_path):
        os.unlink(notify_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify_path)
    control = os.path.join(work, f"netpathd-{label}.sock")
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    log = open(os.path.join(work, f"netpathd-{label}.log"), "w")
    start_ns = now_ns()
    proc = subprocess.Popen(in_ns(ns, [args.netpathd, "--config", config(work), "--control-socket", control]),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True)
    try:
        listener.settimeout(args.timeout)
        ready_ns = None
        deadline = time.monotonic() + args.timeout
        while ready_ns is None and time.monotonic() < deadline:
            try:
                data = listener.recv(4096)
            except socket.timeout:
                break
            if b"READY=1" in data.split(b"\n"):
                ready_ns = now_ns()
        if ready_ns is None:
            sys.exit(f"netpathd ({label}) sent no READY=1 within {args.timeout} s: "
                     + open(log.name).read()[-2000:])
        time.sleep(args.idle)
        if proc.poll() is not None:
            sys.exit(f"netpathd ({label}) exited with status {proc.returncode}")
        return {
            "ready_ms": (ready_ns - start_ns) / 1e6,
            "rss_kib": status_kib(proc.pid, "VmRSS"),
            "rss_anon_kib": status_kib(proc.pid, "RssAnon"),
            "rss_file_kib": status_kib(proc.pid, "RssFile"),
            "hwm_kib": status_kib(proc.pid, "VmHWM"),
            "cpu_ms": ticks_to_ms(cpu_ticks(proc.pid)),
        }
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        listener.close()
        os.unlink(notify_path)
        log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", required=True, help="the namespace that gets the routes")
    ap.add_argument("--empty-ns", required=True, help="a namespace set up alike that keeps its few routes")
    ap.add_argument("--starts", type=int, default=5, help="starts in each namespace (default 5)")
    ap.add_argument("--netpathd", required=True)
    ap.add_argument("--routes", type=int, default=1_000_000)
    ap.add_argument("--via", default="192.0.2.2")
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)

    batch = tempfile.NamedTemporaryFile(prefix="netpath-startup-", suffix=".batch", delete=False)
    batch.close()
    try:
        write_batch(batch.name, args.routes, args.via)
        subprocess.run(in_ns(args.ns, ["ip", "-batch", batch.name]), check=True)
    finally:
        os.unlink(batch.name)
    count = subprocess.run(in_ns(args.ns, ["sh", "-c", "ip -4 route show table all | wc -l"]),
                           capture_output=True, text=True, check=True).stdout.strip()

    starts = {"without": [], "with": []}
    for start in range(args.starts):
        starts["without"].append(start_once(args, args.empty_ns, work, f"empty-{start}"))
        starts["with"].append(start_once(args, args.ns, work, f"full-{start}"))
    result = {"routes": args.routes, "routes_in_table": int(count), "starts": args.starts}
    for kind, runs in starts.items():
        summary = {key: median(sorted(r[key] for r in runs)) for key in runs[0]}
        summary["ready_ms"] = max(r["ready_ms"] for r in runs)
        summary["starts"] = runs
        result[kind] = summary

    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print("startup: " + json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
