#!/usr/bin/env python3
"""Start-up with a large route table: netpathd's time to READY=1 and its idle RSS.

In a namespace with an addressed link (--via reachable) and a default route, netpathd starts
twice: first with the namespace's few routes, then after `ip -batch` has added --routes /32
routes (the batch is not timed). Each time it runs with an empty hooks directory, no startup
events and a NOTIFY_SOCKET this harness listens on, and is measured:
  ready_ms   from just before the exec to the arrival of its READY=1 datagram;
  rss        VmRSS, RssAnon, RssFile and VmHWM --idle seconds after READY=1, and the CPU it
             used until then (utime+stime, all threads).
Writes JSON to --out.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from common import cpu_ticks, in_ns, now_ns, status_kib, ticks_to_ms
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


def start_once(args, work, label):
    notify_path = os.path.join(work, f"notify-{label}.sock")
    if os.path.exists(notify_path):
        os.unlink(notify_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify_path)
    control = os.path.join(work, f"netpathd-{label}.sock")
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    log = open(os.path.join(work, f"netpathd-{label}.log"), "w")
    start_ns = now_ns()
    proc = subprocess.Popen(in_ns(args.ns, [args.netpathd, "--config", config(work), "--control-socket", control]),
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
    ap.add_argument("--ns", required=True)
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

    result = {"routes": args.routes, "without": start_once(args, work, "empty")}
    batch = tempfile.NamedTemporaryFile(prefix="netpath-startup-", suffix=".batch", delete=False)
    batch.close()
    try:
        write_batch(batch.name, args.routes, args.via)
        subprocess.run(in_ns(args.ns, ["ip", "-batch", batch.name]), check=True)
    finally:
        os.unlink(batch.name)
    count = subprocess.run(in_ns(args.ns, ["sh", "-c", "ip -4 route show table all | wc -l"]),
                           capture_output=True, text=True, check=True).stdout.strip()
    result["routes_in_table"] = int(count)
    result["with"] = start_once(args, work, "full")

    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print("startup: " + json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
