#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Link-change latency: netpathctl monitor against `ip monitor link`, side by side, one run.

Both listeners run in the watched link's namespace and are read identically (common.LineReader:
a thread per pipe, each line stamped with CLOCK_REALTIME when the read that carried it returns).
bench/out/toggle makes the changes and stamps CLOCK_REALTIME right before each ioctl. For each
toggle, the first line a listener printed after it (and before the next toggle) is its answer;
latency = arrival - toggle stamp. A toggle with no line in its window counts as missed.

Two kinds of change, in the same run and with the same listeners:
  admin   - IFF_UP of the watched link itself, in the listeners' namespace;
  carrier - IFF_UP of the veth peer in the second namespace: the watched link's carrier changes.

Writes a JSON result (medians, p99, counts) to --out.
"""

import argparse
import json
import subprocess
import sys
import time

from common import LineReader, MachineLoad, in_ns, median, percentile, spawn, stop


def run_toggles(toggle, namespace, link, count, gap_ms):
    out = subprocess.run(in_ns(namespace, [toggle, link, str(count), str(gap_ms)]),
                         check=True, capture_output=True, text=True).stdout
    toggles = []
    for line in out.splitlines():
        seq, ts, state = line.split()
        toggles.append((int(seq), int(ts), state))
    return toggles


def toggle_kinds(args, kinds):
    """Toggles each (kind, namespace, link) in turn, warm-up toggles first; returns the measured
    toggles per kind and the machine's load meanwhile."""
    runs = {}
    load = MachineLoad().start()
    for kind, namespace, link in kinds:
        toggles = run_toggles(args.toggle, namespace, link, args.warmup + args.count, args.gap_ms)
        runs[kind] = toggles[args.warmup:]
        time.sleep(0.5)  # let the last change's lines arrive before the next kind starts
    return runs, load.stop()


def toggle_admin_and_carrier(args, listeners):
    """The latency phase both latency.py and library.py run: admin toggles of the watched link,
    then carrier toggles of its peer, with the listeners already reading. Returns the result
    skeleton (counts and machine load) and the measured toggles per kind."""
    result = {"count": args.count, "warmup": args.warmup, "gap_ms": args.gap_ms, "kinds": {}}
    runs, result["machine_load"] = toggle_kinds(
        args, (("admin", args.ns, args.link), ("carrier", args.peer_ns, args.peer_link)))
    exit_if_any_exited(listeners)
    return result, runs


def exit_if_any_exited(listeners):
    for name, proc in listeners.items():
        if proc.poll() is not None:
            sys.exit(f"{name} exited early with status {proc.returncode}")


def per_kind(runs, readers, in_process, gap_ns):
    """Each kind's latencies: per listener (arrival of its lines) and per in-process stamp."""
    return {
        kind: {name: summarize(match(toggles, [t for t, _ in reader.lines], gap_ns)) for name, reader in readers.items()}
        | {"in_process": {name: summarize(match(toggles, times, gap_ns)) for name, times in in_process.items()}}
        for kind, toggles in runs.items()
    }


def match(toggles, times, gap_ns, window_ns=None):
    """Latency (ns) of the first time after each toggle, None where none came before the next
    (or, with `window_ns`, within that long: for toggles not followed by the next one they are
    matched against, such as bench/hooks.py's after a route batch)."""
    times = sorted(times)
    latencies = []
    i = 0
    for k, (_, ts, _) in enumerate(toggles):
        end = toggles[k + 1][1] if k + 1 < len(toggles) else ts + gap_ns
        if window_ns is not None:
            end = min(end, ts + window_ns)
        while i < len(times) and times[i] < ts:
            i += 1
        if i < len(times) and times[i] < end:
            latencies.append(times[i] - ts)
        else:
            latencies.append(None)
    return latencies


def ip_stamps(lines):
    """The times `ip -ts` printed on its lines: `[YYYY-MM-DDTHH:MM:SS.uuuuuu] ...`, local time,
    read with gettimeofday() when ip's callback started on a message (before formatting it)."""
    out = []
    for _, line in lines:
        if not line.startswith(b"["):
            continue
        stamp = line[1:line.index(b"]")].decode()
        whole, micros = stamp.split(".")
        seconds = time.mktime(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
        out.append(int(seconds) * 1_000_000_000 + int(micros) * 1000)
    return out


def netpathctl_stamps(path):
    """(received_at, published_ns, emitted_ns) of each --bench-snapshots line but the initial dump."""
    received, published, emitted = [], [], []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                snap = json.loads(line)
                # Kernel changes only: not the initial dump, nor a resolv.conf change's snapshot.
                if snap["cause"] not in ("initial-dump", "watched-file"):
                    received.append(snap["received_at"])
                    published.append(snap.get("published_ns", snap["received_at"]))
                    emitted.append(snap["emitted_ns"])
    return received, published, emitted


def summarize(latencies_ns):
    got = sorted(x / 1000.0 for x in latencies_ns if x is not None)
    return {
        "toggles": len(latencies_ns),
        "matched": len(got),
        "missed": len(latencies_ns) - len(got),
        "median_us": median(got),
        "p99_us": percentile(got, 99),
        "min_us": got[0] if got else None,
        "max_us": got[-1] if got else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", required=True, help="namespace of the watched link and the listeners")
    ap.add_argument("--peer-ns", required=True, help="namespace of the veth peer")
    ap.add_argument("--link", required=True)
    ap.add_argument("--peer-link", required=True)
    ap.add_argument("--netpathctl", required=True)
    ap.add_argument("--toggle", required=True)
    ap.add_argument("--count", type=int, default=400, help="measured toggles per kind")
    ap.add_argument("--warmup", type=int, default=10, help="toggles per kind made first and not counted")
    ap.add_argument("--gap-ms", type=int, default=30)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.count % 2 or args.warmup % 2:
        sys.exit("--count and --warmup must be even (each kind leaves the link as it found it)")

    # netpathctl's stderr (the --bench-snapshots lines) goes to a file, read only at the end:
    # reading it live would put a third harness thread in contention with the two measured ones.
    snapshot_log = args.out + ".snapshots"
    with open(snapshot_log, "w") as log:
        listeners = {
            "ip monitor": spawn(in_ns(args.ns, ["ip", "-ts", "monitor", "link"])),
            "netpathctl monitor": spawn(in_ns(args.ns, [args.netpathctl, "monitor", "--local", "--json",
                                                        "--bench-snapshots"]), stderr=log),
        }
    readers = {}
    try:
        for name, proc in listeners.items():
            readers[name] = LineReader(proc.stdout.fileno(), name)
            readers[name].start()
        # netpathctl prints its first snapshot line once its initial dump is loaded.
        deadline = time.monotonic() + 15
        while '"generation"' not in open(snapshot_log).read():
            if time.monotonic() > deadline or listeners["netpathctl monitor"].poll() is not None:
                sys.exit("netpathctl monitor did not start: " + open(snapshot_log).read())
            time.sleep(0.05)
        time.sleep(1.0)

        gap_ns = args.gap_ms * 1_000_000
        results, runs = toggle_admin_and_carrier(args, listeners)
    finally:
        for proc in listeners.values():
            stop(proc)

    # What each process itself saw, to split the harness-measured figure: ip's -ts stamp (taken
    # as its callback starts on a parsed message), netpathctl's received_at (poll() returned,
    # before parsing), published_ns (the engine handed out the parsed, applied snapshot: the
    # change left the engine) and emitted_ns (monitor had written the batch's events).
    received, published, emitted = netpathctl_stamps(snapshot_log)
    in_process = {
        "ip monitor: -ts stamp": ip_stamps(readers["ip monitor"].lines),
        "netpathctl: engine woke (received_at)": received,
        "netpathctl: left the engine (published_ns)": published,
        "netpathctl: events written (emitted_ns)": emitted,
    }
    results["kinds"] = per_kind(runs, readers, in_process, gap_ns)

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    for kind, per in results["kinds"].items():
        rows = [(name, s) for name, s in per.items() if name != "in_process"] + list(per["in_process"].items())
        for name, s in rows:
            print(f"latency {kind:7} {name:40} median {s['median_us']} us  p99 {s['p99_us']} us"
                  f"  ({s['matched']}/{s['toggles']} matched)", file=sys.stderr)


if __name__ == "__main__":
    main()
