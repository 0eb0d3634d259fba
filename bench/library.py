#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""The Network module (issue 17): link change -> NWPathMonitor's pathUpdateHandler, beside
`ip monitor` in the same run, and the idle RSS a monitor adds to a program.

Latency: `ip -ts monitor link` and `network-monitor-example --stamp` (an NWPathMonitor whose
handler prints each path, prefixed with CLOCK_REALTIME taken as the handler is called) run in the
watched link's namespace and are read the same way as bench/latency.py reads its listeners. Each
toggle (admin: the watched link's IFF_UP; carrier: the peer's) makes the path unsatisfied or
satisfied again, so each gets one handler call. Two figures per listener: the first line on
stdout (end to end, stamped by this harness) and the process's own stamp (ip's -ts, the handler's
entry). The issue's target compares the medians of the in-process stamps.

Memory: `network-monitor-example --no-monitor` (the same binary, the Network module linked and
loaded, no monitor) and `network-monitor-example` (one started monitor) idle side by side; the
difference of their VmRSS is what a monitor adds.

Writes JSON to --out.
"""

import argparse
import json
import sys
import time

from common import LineReader, cpu_ticks, in_ns, pss_kib, spawn, status_kib, stop, ticks_to_ms
from latency import ip_stamps, per_kind, toggle_admin_and_carrier


def handler_stamps(lines):
    """The CLOCK_REALTIME stamps that start network-monitor-example's lines."""
    stamps = []
    for _, line in lines:
        head = line.split(b" ", 1)[0]
        if head.isdigit():
            stamps.append(int(head))
    return stamps


def wait_started(proc, name, timeout=15):
    reader = LineReader(proc.stderr.fileno(), name + " stderr")
    reader.start()
    if not reader.first_line.wait(timeout) or proc.poll() is not None:
        sys.exit(f"{name} did not start")
    return reader


def latency(args):
    listeners = {
        "ip monitor": spawn(in_ns(args.ns, ["ip", "-ts", "monitor", "link"])),
        "NWPathMonitor": spawn(in_ns(args.ns, [args.example, "--stamp"])),
    }
    try:
        readers = {name: LineReader(proc.stdout.fileno(), name) for name, proc in listeners.items()}
        for reader in readers.values():
            reader.start()
        wait_started(listeners["NWPathMonitor"], "network-monitor-example")
        time.sleep(1.0)
        gap_ns = args.gap_ms * 1_000_000
        result, runs = toggle_admin_and_carrier(args, listeners)
    finally:
        for proc in listeners.values():
            stop(proc)
    in_process = {
        "ip monitor: -ts stamp": ip_stamps(readers["ip monitor"].lines),
        "NWPathMonitor: handler called": handler_stamps(readers["NWPathMonitor"].lines),
    }
    result["kinds"] = per_kind(runs, readers, in_process, gap_ns)
    return result


def memory(args):
    programs = {
        "without a monitor": spawn(in_ns(args.ns, [args.example, "--no-monitor"])),
        "with one NWPathMonitor": spawn(in_ns(args.ns, [args.example])),
    }
    result = {"idle_s": args.idle, "programs": {}}
    try:
        for name, proc in programs.items():
            wait_started(proc, name)
            LineReader(proc.stdout.fileno(), name).start()
        cpu = {name: cpu_ticks(proc.pid) for name, proc in programs.items()}
        time.sleep(args.idle)
        for name, proc in programs.items():
            if proc.poll() is not None:
                sys.exit(f"network-monitor-example {name} exited early with status {proc.returncode}")
            result["programs"][name] = {
                "rss_kib": status_kib(proc.pid, "VmRSS"),
                "rss_anon_kib": status_kib(proc.pid, "RssAnon"),
                "rss_file_kib": status_kib(proc.pid, "RssFile"),
                "pss_kib": pss_kib(proc.pid),
                "threads": int(open(f"/proc/{proc.pid}/status").read().split("Threads:")[1].split()[0]),
                "idle_cpu_ms": ticks_to_ms(cpu_ticks(proc.pid) - cpu[name]),
            }
    finally:
        for proc in programs.values():
            stop(proc)
    base, monitored = result["programs"]["without a monitor"], result["programs"]["with one NWPathMonitor"]
    result["added_rss_kib"] = monitored["rss_kib"] - base["rss_kib"]
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", required=True, help="namespace of the watched link and the listeners")
    ap.add_argument("--peer-ns", required=True, help="namespace of the veth peer")
    ap.add_argument("--link", required=True)
    ap.add_argument("--peer-link", required=True)
    ap.add_argument("--example", required=True, help="the network-monitor-example binary")
    ap.add_argument("--toggle", required=True)
    ap.add_argument("--count", type=int, default=400, help="measured toggles per kind")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--gap-ms", type=int, default=30)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.count % 2 or args.warmup % 2:
        sys.exit("--count and --warmup must be even (each kind leaves the link as it found it)")

    result = {"latency": latency(args), "memory": memory(args)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    for kind, per in result["latency"]["kinds"].items():
        rows = [(n, s) for n, s in per.items() if n != "in_process"] + list(per["in_process"].items())
        for name, s in rows:
            print(f"library {kind:7} {name:32} median {s['median_us']} us  p99 {s['p99_us']} us"
                  f"  ({s['matched']}/{s['toggles']} matched)", file=sys.stderr)
    print(f"library: a monitor adds {result['memory']['added_rss_kib']} KiB RSS", file=sys.stderr)


if __name__ == "__main__":
    main()
