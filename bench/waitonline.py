#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""`netpathctl wait-online` (issue 40): how soon after the change that makes the network online
it says so, beside `ip monitor` seeing the same change.

netpathd runs in --ns on the veth of namespaces.sh's add_veth, whose default route this removes:
the default policy is unsatisfied. Each round starts `netpathctl wait-online` and waits for its
"waiting:" line on stderr (it follows the agent's events now), stamps CLOCK_REALTIME and adds the
default route back; `ip -ts monitor route` in the same namespace sees the route, and wait-online
prints "online: …" and exits. Per round, from the stamp: ip's first line about the route and
wait-online's "online:" line, both stamped when this harness read them (bench/common.py's
LineReader, the same for both), and wait-online's exit. Then the route goes again.

Writes JSON to --out.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from common import LineReader, agent_work, in_ns, median, now_ns, percentile, spawn, stop


def summarize(values_ns):
    got = sorted(v / 1000.0 for v in values_ns if v is not None)
    return {"rounds": len(values_ns), "matched": len(got), "median_us": median(got), "p99_us": percentile(got, 99)}


def wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--link", default="npb0")
    ap.add_argument("--gateway", default="192.0.2.2")
    ap.add_argument("--netpathd", required=True)
    ap.add_argument("--netpathctl", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    work, hooks_dir = agent_work(args.work)
    config = os.path.join(work, "netpath.toml")
    with open(config, "w") as f:
        f.write(f'[agent]\nhooks_dir = "{hooks_dir}"\nsettle = "0s"\nstartup_events = false\nmetrics = ""\n')
    socket_path = os.path.join(work, "netpathd.sock")
    route = ["route", "add", "default", "via", args.gateway, "dev", args.link, "metric", "100"]
    subprocess.run(in_ns(args.ns, ["ip", "route", "del", "default"]), stderr=subprocess.DEVNULL)

    agent = spawn(in_ns(args.ns, [args.netpathd, "--config", config, "--control-socket", socket_path]))
    monitor = spawn(in_ns(args.ns, ["ip", "-ts", "monitor", "route"]))
    ip = LineReader(monitor.stdout.fileno(), "ip monitor")
    ip.start()
    seen_ip, seen_online, seen_exit = [], [], []
    try:
        if not wait_until(lambda: os.path.exists(socket_path), 15):
            sys.exit("netpathd's control socket did not appear")
        for _ in range(args.rounds):
            waiter = spawn(in_ns(args.ns, [args.netpathctl, "wait-online", "--socket", socket_path,
                                           "--timeout", "10"]))
            err = LineReader(waiter.stderr.fileno(), "wait-online stderr", watch=b"waiting:")
            out = LineReader(waiter.stdout.fileno(), "wait-online stdout", watch=b"online:")
            err.start()
            out.start()
            if not err.watched.wait(10):
                sys.exit("wait-online never said it was waiting: " + repr(err.lines))
            before = len(ip.lines)
            start = now_ns()
            subprocess.run(in_ns(args.ns, ["ip"] + route), check=True)
            out.watched.wait(10)
            waiter.wait(10)
            exited = now_ns()
            seen_online.append(None if out.watch_ns is None else out.watch_ns - start)
            seen_exit.append(exited - start if waiter.returncode == 0 else None)
            wait_until(lambda: any(b"default via" in line for _, line in ip.lines[before:]), 5)
            arrivals = [t for t, line in ip.lines[before:] if b"default via" in line]
            seen_ip.append(arrivals[0] - start if arrivals else None)
            subprocess.run(in_ns(args.ns, ["ip", "route", "del", "default"]), check=True)
            time.sleep(0.05)
    finally:
        stop(monitor)
        stop(agent)
        subprocess.run(in_ns(args.ns, ["ip"] + route), stderr=subprocess.DEVNULL)

    result = {"ip monitor": summarize(seen_ip), "online line": summarize(seen_online),
              "exit": summarize(seen_exit)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for name, s in result.items():
        print(f"wait-online {name:12} median {s['median_us']} us  p99 {s['p99_us']} us  "
              f"({s['matched']}/{s['rounds']})", file=sys.stderr)


if __name__ == "__main__":
    main()
