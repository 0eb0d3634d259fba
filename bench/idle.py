#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Idle memory: VmRSS of `netpathctl monitor --local` and of `ip monitor` after --idle seconds.

Both run in the same namespace (one addressed veth pair and a default route), stdout to a pipe
that nobody writes to meanwhile; netpathctl's idle period starts once its initial dump is loaded.
Also records VmHWM and the CPU they used while idle. Writes JSON to --out.
"""

import argparse
import json
import sys
import time

from common import LineReader, MachineLoad, cpu_ticks, in_ns, pss_kib, spawn, status_kib, stop, ticks_to_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--netpathctl", required=True)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PATH",
                    help="also measure another netpathctl build (e.g. one linked with --static-swift-stdlib)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    listeners = {
        "netpathctl monitor": spawn(in_ns(args.ns, [args.netpathctl, "monitor", "--local"])),
        "ip monitor": spawn(in_ns(args.ns, ["ip", "monitor"])),
    }
    for variant in args.variant:
        label, path = variant.split("=", 1)
        listeners[f"netpathctl monitor ({label})"] = spawn(in_ns(args.ns, [path, "monitor", "--local"]))
    result = {"idle_s": args.idle, "listeners": {}}
    try:
        readers = [LineReader(p.stdout.fileno(), n) for n, p in listeners.items()]
        # Each netpathctl says "monitoring N interfaces" on stderr once its initial dump is loaded.
        started = [LineReader(p.stderr.fileno(), n + " stderr") for n, p in listeners.items() if n != "ip monitor"]
        for r in readers + started:
            r.start()
        for r in started:
            if not r.first_line.wait(15):
                sys.exit(f"{r.name} did not start")
        cpu = {n: cpu_ticks(p.pid) for n, p in listeners.items()}
        load = MachineLoad().start()
        time.sleep(args.idle)
        result["machine_load"] = load.stop()
        for name, proc in listeners.items():
            if proc.poll() is not None:
                sys.exit(f"{name} exited early with status {proc.returncode}")
            result["listeners"][name] = {
                "rss_kib": status_kib(proc.pid, "VmRSS"),
                "hwm_kib": status_kib(proc.pid, "VmHWM"),
                "rss_anon_kib": status_kib(proc.pid, "RssAnon"),
                "rss_file_kib": status_kib(proc.pid, "RssFile"),
                "pss_kib": pss_kib(proc.pid),
                "idle_cpu_ms": ticks_to_ms(cpu_ticks(proc.pid) - cpu[name]),
            }
    finally:
        for proc in listeners.values():
            stop(proc)

    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print("idle: " + json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
