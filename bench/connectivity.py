#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Connectivity probing (issue 21): how soon netpathd reports a portal turning into full internet,
and what probing costs at idle.

Two namespaces joined by a veth pair (bench/namespaces.sh's add_veth): the peer runs a small HTTP
endpoint (this file, --serve) at 192.0.2.2:8080 that answers /check with a 302 to a login page
while its mode file says "portal" and with 204 otherwise; netpathd runs in the other namespace
with `[connectivity] uri = "http://192.0.2.2:8080/check"` and a hook that stamps every
`connectivity-changed` event (bench/out/hookstamp: CLOCK_REALTIME, then the interface, the event
and NETPATH_CONNECTIVITY). Nothing leaves the two namespaces.

  portal → full, default interval   the endpoint turns from portal to 204 --after seconds after the
                                    interface was found behind the portal; how long until the hook
                                    stamps `full` (the probe schedule backs off while not full:
                                    docs/connectivity.md);
  link change                       with the endpoint at 204, the link goes down and up; how long
                                    from the up to the hook's `full` (a change triggers a probe);
  idle                              netpathd's VmRSS with and without [connectivity] (same
                                    namespace, a fresh agent each with no hook, both after --idle
                                    seconds, the interface full), the context switches of all its
                                    threads over the second half of that, between probes, and the
                                    probe helper's VmRSS; --idle-starts agents per state, off and
                                    on in turn, and their medians (one start's VmRSS moves by
                                    ±0.5 MB with the page cache: which neighbouring pages of the
                                    binary it holds decides what each fault maps).

Writes a JSON result to --out.
"""

import argparse
import http.server
import json
import os
import subprocess
import sys
import time

from common import agent_work, in_ns, median, now_ns, spawn, status_kib, stop


def serve(mode_file, port):
    """The endpoint: 302 to a login page in portal mode, 204 otherwise."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            mode = open(mode_file).read().strip() if os.path.exists(mode_file) else "full"
            if mode == "portal" and self.path.startswith("/check"):
                self.send_response(302)
                self.send_header("Location", f"http://192.0.2.2:{port}/login")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path.startswith("/check"):
                self.send_response(204)
                self.end_headers()
            else:
                body = b"<html><body>login</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("192.0.2.2", port), Handler).serve_forever()


def stamps(path):
    """(ts_ns, interface, event, connectivity) per stamp the hook wrote."""
    out = []
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 4:
                out.append((int(parts[0]), parts[1], parts[2], parts[3]))
    return out


def wait_for_stamp(path, after_ns, connectivity, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for ts, _, event, state in stamps(path):
            if ts >= after_ns and event == "connectivity-changed" and state == connectivity:
                return ts
        time.sleep(0.01)
    return None


def context_switches(pid):
    """Context switches so far of each thread of `pid`, by thread id."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                counts[task] = sum(int(line.split()[1]) for line in f
                                   if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass  # the thread ended meanwhile
    return counts


def switches_per_s(pid, seconds):
    """How often the threads of `pid` were switched in over `seconds` (threads that started
    meanwhile count from zero)."""
    before = context_switches(pid)
    time.sleep(seconds)
    after = context_switches(pid)
    return sum(max(0, count - before.get(task, 0)) for task, count in after.items()) / seconds


def helpers(pid):
    """The probe helper processes netpathd `pid` started."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                if stat.split(" (", 1)[1].startswith("netpath-probe)") and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
            except (OSError, IndexError):
                pass
    return out


def config(work, hooks_dir, probing, interval):
    path = os.path.join(work, f"netpath-{'probing' if probing else 'off'}-{os.path.basename(hooks_dir)}.toml")
    text = (f'[agent]\nhooks_dir = "{hooks_dir}"\nsettle = "0s"\nstartup_events = false\nmetrics = ""\n')
    if probing:
        text += (f'\n[connectivity]\nuri = "http://192.0.2.2:8080/check"\ninterval = "{interval}"\n'
                 'timeout = "2s"\n')
    open(path, "w").write(text)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--serve", metavar="MODE_FILE", help=argparse.SUPPRESS)
    ap.add_argument("--ns")
    ap.add_argument("--peer-ns")
    ap.add_argument("--link", default="npb0")
    ap.add_argument("--netpathd")
    ap.add_argument("--stamp", help="the hookstamp helper (bench/hookstamp.c)")
    ap.add_argument("--work")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--after", type=float, default=20.0,
                    help="seconds behind the portal before the endpoint turns to 204")
    ap.add_argument("--interval", default="5m", help="[connectivity] interval (the default is 5m)")
    ap.add_argument("--idle", type=float, default=20.0)
    ap.add_argument("--idle-starts", type=int, default=3,
                    help="fresh agents per state in the idle phase (off and on in turn); medians are reported")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.serve:
        return serve(args.serve, 8080)

    work, hooks_dir = agent_work(args.work)
    stamp_file = os.path.join(work, "stamps")
    hook = os.path.join(hooks_dir, "50-stamp")
    with open(hook, "w") as f:
        f.write("#!/bin/sh\n[ \"$2\" = connectivity-changed ] || exit 0\n"
                f'exec {os.path.abspath(args.stamp)} {stamp_file} "${{1:--}}" "$2" "$NETPATH_CONNECTIVITY"\n')
    os.chmod(hook, 0o755)
    mode_file = os.path.join(work, "mode")
    open(mode_file, "w").write("portal")

    server = spawn(in_ns(args.peer_ns, [sys.executable, os.path.abspath(__file__), "--serve", mode_file]))
    result = {"interval": args.interval, "after_s": args.after, "rounds": args.rounds, "idle_s": args.idle}
    agent = None
    try:
        time.sleep(0.5)
        # Idle without probing, then with it, each a fresh agent with an empty hooks directory and
        # nothing changing: what probing itself adds (the hook runs of the rounds below would
        # add their own).
        empty = os.path.join(work, "empty.d")
        os.makedirs(empty, exist_ok=True)
        os.chmod(empty, 0o755)
        open(mode_file, "w").write("full")
        starts = {"off": [], "on": []}
        for start in range(args.idle_starts):
            for phase, probing in (("off", False), ("on", True)):
                socket_path = os.path.join(work, f"idle-{phase}-{start}.sock")
                agent = spawn(in_ns(args.ns, [args.netpathd, "--config",
                                              config(work, empty, probing, args.interval),
                                              "--control-socket", socket_path]))
                time.sleep(2 + args.idle / 2)
                starts[phase].append({"switches_per_s": switches_per_s(agent.pid, args.idle / 2),
                                      "rss_kib": status_kib(agent.pid, "VmRSS"),
                                      "helper_rss_kib": [status_kib(p, "VmRSS") for p in helpers(agent.pid)]})
                stop(agent)
                agent = None
        result["idle_starts"] = args.idle_starts
        for phase, runs in starts.items():
            result[phase] = {"switches_per_s": median(sorted(r["switches_per_s"] for r in runs)),
                             "rss_kib": median(sorted(r["rss_kib"] for r in runs)),
                             "helper_rss_kib": runs[-1]["helper_rss_kib"],
                             "starts": runs}

        socket_path = os.path.join(work, "on.sock")
        agent = spawn(in_ns(args.ns, [args.netpathd, "--config", config(work, hooks_dir, True, args.interval),
                                      "--control-socket", socket_path]))
        portal_to_full = []
        for _ in range(args.rounds):
            open(mode_file, "w").write("portal")
            start = now_ns()
            # A fresh verdict: a link change makes the interface probed again.
            subprocess.run(in_ns(args.ns, ["ip", "link", "set", args.link, "down"]), check=True)
            subprocess.run(in_ns(args.ns, ["ip", "link", "set", args.link, "up"]), check=True)
            subprocess.run(in_ns(args.ns, ["ip", "route", "replace", "default", "via", "192.0.2.2", "dev",
                                           args.link, "metric", "100"]), check=True)
            if wait_for_stamp(stamp_file, start, "portal", 30) is None:
                sys.exit("netpathd never reported the portal: " + open(stamp_file).read() if os.path.exists(
                    stamp_file) else "no stamps")
            time.sleep(args.after)
            switched = now_ns()
            open(mode_file, "w").write("full")
            got = wait_for_stamp(stamp_file, switched, "full", 600)
            portal_to_full.append(None if got is None else (got - switched) / 1e6)
        result["portal_to_full_ms"] = portal_to_full

        # A link change with the endpoint at 204: from the up to the hook's `full`.
        link_change = []
        for _ in range(args.rounds):
            subprocess.run(in_ns(args.ns, ["ip", "link", "set", args.link, "down"]), check=True)
            time.sleep(0.5)
            up = now_ns()
            subprocess.run(in_ns(args.ns, ["ip", "link", "set", args.link, "up"]), check=True)
            subprocess.run(in_ns(args.ns, ["ip", "route", "replace", "default", "via", "192.0.2.2", "dev",
                                           args.link, "metric", "100"]), check=True)
            got = wait_for_stamp(stamp_file, up, "full", 60)
            link_change.append(None if got is None else (got - up) / 1e6)
            time.sleep(1)
        result["link_change_to_full_ms"] = link_change

    finally:
        if agent:
            stop(agent)
        stop(server)

    result["portal_to_full_median_ms"] = median(sorted(v for v in result["portal_to_full_ms"] if v is not None))
    result["link_change_median_ms"] = median(sorted(v for v in result["link_change_to_full_ms"] if v is not None))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
