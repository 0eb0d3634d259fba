#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""The container host (issue 42): 2,000 veth pairs created and deleted beside netpathd on its
default configuration, and a real uplink's carrier change in the middle of it.

Three namespaces: the host (--ns), with the uplink npb0 (bench/namespaces.sh's add_veth: an
address and a default route; its peer npb1 in --peer-ns) and netpathd; and --ctr-ns, where the
container ends go. The links are made as Docker makes them: a bridge `docker0`, and per container
a veth pair whose host end is `veth` and 7 hex digits, enslaved to docker0 (the second thousand
to a user network's `br-…`: a bridge takes 1,024 ports at most) and up, and whose other
end is in the container's namespace. netpathd runs with no configuration but its hooks
directory and control socket, so `[agent] ignore` has its default; its one hook stamps every run
(bench/out/hookstamp: CLOCK_REALTIME, the interface, the event).
`status` is polled every 100 ms while netpathd catches up; its answers (the ignored links are
listed in them) are counted in netpathd's CPU.

  idle        --toggles carrier changes of the uplink (npb1 down and up, bench/out/toggle, which
              stamps right before the change): change → the hook's stamp of carrier-down/-up;
  batch       one `ip -batch` adds --pairs pairs, then (once netpathd shows them all as ignored)
              one deletes them; an uplink carrier change is made while each batch runs;
  paced       the same pairs added one by one at --rate per second, then deleted so (`ip -batch -`
              fed a line at a time), with an uplink carrier change every --paced-toggle-every s.

Per burst: netpathd's CPU (utime+stime of all its threads, from the burst's start to the moment
`netpathctl status` shows it caught up), its peak RSS during the burst (VmHWM, reset before it
through /proc/PID/clear_refs) and its RSS after, hook runs for links other than the uplink (its
interface events and the path's), and the catch-up time: from the end of the burst's last `ip`
command to the first `status` that shows every link (or none) ignored.

Writes a JSON result to --out.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

from common import cpu_ticks, in_ns, median, now_ns, spawn, status_kib, stop, ticks_to_ms

UPLINK = "npb0"


def host_end(i):
    return "veth%07x" % (0xA11CE + i * 7919)


# A bridge takes at most 1,024 ports (BR_MAX_PORTS): the second thousand go on a user-defined
# network's bridge, named as Docker names it.
BRIDGES = ("docker0", "br-4c1f6a7e2b90")


def add_lines(i, ctr_ns):
    return [f"link add {host_end(i)} type veth peer name c{i} netns {ctr_ns}",
            f"link set {host_end(i)} master {BRIDGES[i // 1000 % 2]} up"]


def stamps(path):
    """(ts_ns, interface, event) per hook run."""
    out = []
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 3:
                out.append((int(parts[0]), parts[1], parts[2]))
    return out


class Agent:
    def __init__(self, args, work):
        self.args = args
        self.socket = os.path.join(work, "netpathd.sock")
        self.stamp_file = os.path.join(work, "stamps")
        hooks = os.path.join(work, "hooks.d")
        os.makedirs(hooks, exist_ok=True)
        os.chmod(hooks, 0o755)
        hook = os.path.join(hooks, "50-stamp")
        with open(hook, "w") as f:
            f.write(f'#!/bin/sh\nexec {os.path.abspath(args.stamp)} {self.stamp_file} "${{1:--}}" "$2"\n')
        os.chmod(hook, 0o755)
        config = os.path.join(work, "netpath.toml")
        # The default configuration but for where this run's hooks and socket are.
        with open(config, "w") as f:
            f.write(f'[agent]\nhooks_dir = "{hooks}"\ncontrol_socket = "{self.socket}"\n')
        self.log = open(os.path.join(work, "netpathd.log"), "wb")
        self.proc = spawn(in_ns(args.ns, [args.netpathd, "--config", config]), stdout=self.log,
                          stderr=subprocess.STDOUT)
        self.pid = self.proc.pid

    def status(self):
        done = subprocess.run([self.args.netpathctl, "status", "--json", "--socket", self.socket],
                              capture_output=True, text=True)
        return json.loads(done.stdout) if done.returncode == 0 else None

    def await_status(self, predicate, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status()
            if status is not None and predicate(status):
                return now_ns()
            time.sleep(0.1)
        sys.exit(f"netpathd never caught up: {self.status()}")

    def cpu_ms(self):
        return ticks_to_ms(cpu_ticks(self.pid))

    def reset_peak(self):
        with open(f"/proc/{self.pid}/clear_refs", "w") as f:
            f.write("5")

    def stop(self):
        stop(self.proc)
        self.log.close()


class Toggler:
    """Uplink carrier changes: npb1 (the peer) down, then up, stamped by bench/out/toggle."""

    def __init__(self, args):
        self.args = args
        self.changes = []  # (ts_ns, "carrier-down" | "carrier-up")

    def flip(self, gap_ms=300):
        out = subprocess.run(in_ns(self.args.peer_ns, [self.args.toggle, "npb1", "2", str(gap_ms)]),
                             capture_output=True, text=True, check=True).stdout
        for line in out.split("\n"):
            parts = line.split()
            if len(parts) >= 3:
                self.changes.append((int(parts[1]), "carrier-up" if parts[2] == "up" else "carrier-down"))

    def background(self):
        return subprocess.Popen(in_ns(self.args.peer_ns, [self.args.toggle, "npb1", "2", "300"]),
                                stdout=subprocess.PIPE, text=True)

    def collect(self, proc):
        out, _ = proc.communicate()
        for line in out.split("\n"):
            parts = line.split()
            if len(parts) >= 3:
                self.changes.append((int(parts[1]), "carrier-up" if parts[2] == "up" else "carrier-down"))


def hook_starts(changes, stamp_file, timeout=10):
    """Per change, ms from it to the first stamp of that event on the uplink after it."""
    deadline = time.monotonic() + timeout
    while True:
        runs = stamps(stamp_file)
        result = []
        for ts, event in changes:
            got = next((s for s, iface, e in runs if s >= ts and iface == UPLINK and e == event), None)
            result.append(None if got is None else (got - ts) / 1e6)
        if all(r is not None for r in result) or time.monotonic() > deadline:
            return result
        time.sleep(0.05)


def strangers(stamp_file, since_ns):
    """Hook runs since `since_ns` for anything but the uplink and the path (`-`: no primary)."""
    return [r for r in stamps(stamp_file) if r[0] >= since_ns and r[1] not in (UPLINK, "-")]


def burst(agent, toggler, name, add, delete, pairs):
    """Runs `add` then `delete` (each returns when its last `ip` command ended), measuring."""
    result = {}
    # The bridges stay: they are still ignored after the deletion.
    for step, run, ignored in (("add", add, pairs + len(BRIDGES)), ("delete", delete, len(BRIDGES))):
        rss_before = status_kib(agent.pid, "VmRSS")
        agent.reset_peak()
        cpu_before = agent.cpu_ms()
        since = now_ns()
        changes_before = len(toggler.changes)
        started = now_ns()
        run()
        ended = now_ns()
        caught_up = agent.await_status(lambda s: len(s.get("ignored", [])) == ignored
                                       and [i["name"] for i in s["interfaces"]] == ["lo", UPLINK])
        cpu = agent.cpu_ms() - cpu_before
        peak = status_kib(agent.pid, "VmHWM")
        time.sleep(1)
        starts = hook_starts(toggler.changes[changes_before:], agent.stamp_file)
        result[step] = {
            "duration_s": (ended - started) / 1e9,
            "catch_up_ms": (caught_up - ended) / 1e6,
            "cpu_ms": cpu,
            "rss_before_kib": rss_before,
            "peak_rss_kib": peak,
            "rss_after_kib": status_kib(agent.pid, "VmRSS"),
            "hooks_for_others": len(strangers(agent.stamp_file, since)),
            "uplink_hook_start_ms": starts,
        }
        print(f"== containers, {name} {step}: {json.dumps(result[step])}", file=sys.stderr)
    return result


def render(r):
    """The markdown section for BENCHMARKS.md (bench/report.py includes it): figures and targets."""
    idle = r["idle_hook_start_median_ms"]
    out = [f"### Container host: {r['pairs']:,} Docker-style veth pairs beside netpathd on its default configuration "
           "(issue 42)", "",
           "| burst | step | took | netpathd CPU | peak RSS (growth) | RSS after | caught up | hooks for ignored links "
           "| uplink carrier → hook (ms) |",
           "|---|---|---|---|---|---|---|---|---|"]
    verdicts = {"rss": True, "hooks": True, "uplink": True}
    during = []
    for burst in ("batch", "paced"):
        label = "one `ip -batch`" if burst == "batch" else f"one by one, {r['rate']:g}/s"
        for step in ("add", "delete"):
            x = r[burst][step]
            growth = x["peak_rss_kib"] - x["rss_before_kib"]
            starts = [v for v in x["uplink_hook_start_ms"] if v is not None]
            missing = len(x["uplink_hook_start_ms"]) - len(starts)
            verdicts["rss"] &= growth <= 1024 and x["rss_after_kib"] - x["rss_before_kib"] <= 1024
            verdicts["hooks"] &= x["hooks_for_others"] == 0
            verdicts["uplink"] &= missing == 0 and bool(starts)
            during += starts
            out.append(f"| {label} | {step} | {x['duration_s']:.1f} s | {x['cpu_ms']:.0f} ms | "
                       f"{x['peak_rss_kib'] / 1024:.1f} MiB ({growth:+} KiB) | {x['rss_after_kib'] / 1024:.1f} MiB | "
                       f"{x['catch_up_ms']:.0f} ms | {x['hooks_for_others']} | "
                       f"{', '.join(f'{v:.1f}' for v in starts)}{f' ({missing} never)' if missing else ''} |")
    during.sort()
    verdicts["uplink"] &= bool(during) and median(during) <= 2 * idle
    out += ["", f"Idle: {r['idle_rss_kib'] / 1024:.1f} MiB RSS, {r['idle_cpu_ms_per_s']:.2f} ms CPU per s; uplink "
            f"carrier → hook {idle:.1f} ms (median of {len(r['idle_hook_start_ms'])} changes).", "",
            "| target (issue 42) | verdict |", "|---|---|",
            f"| RSS growth ≤ 1 MB during the burst and back after it | {'**met**' if verdicts['rss'] else '**not met**'} |",
            f"| zero hooks for ignored links | {'**met**' if verdicts['hooks'] else '**not met**'} |",
            f"| the uplink's carrier change during the burst reaches its hook within 2× the idle hook start "
            f"({2 * idle:.1f} ms; medians) | {median(during):.1f} ms over {len(during)} changes (slowest "
            f"{during[-1]:.1f} ms): {'**met**' if verdicts['uplink'] else '**not met**'} |",
            "| netpathd's CPU at most 1/10 of the cheapest other manager's | **not measured here**: NetworkManager and "
            "systemd-networkd are not installed on the build machine (and must not run there); see the notes |"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", metavar="RESULT", help="print the markdown table of a result file and exit")
    ap.add_argument("--ns")
    ap.add_argument("--peer-ns")
    ap.add_argument("--ctr-ns")
    ap.add_argument("--netpathd")
    ap.add_argument("--netpathctl")
    ap.add_argument("--toggle")
    ap.add_argument("--stamp")
    ap.add_argument("--work")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=50.0, help="pairs per second in the paced burst")
    ap.add_argument("--toggles", type=int, default=20, help="idle uplink carrier flips (down and up each)")
    ap.add_argument("--paced-toggle-every", type=float, default=5.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.report:
        print(render(json.load(open(args.report))), end="")
        return
    for name in ("ns", "peer_ns", "ctr_ns", "netpathd", "netpathctl", "toggle", "stamp", "work", "out"):
        if getattr(args, name) is None:
            ap.error(f"--{name.replace('_', '-')} is required")
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)

    for bridge in BRIDGES:
        subprocess.run(in_ns(args.ns, ["ip", "link", "add", bridge, "type", "bridge"]), check=True)
        subprocess.run(in_ns(args.ns, ["ip", "link", "set", bridge, "up"]), check=True)
    agent = Agent(args, work)
    toggler = Toggler(args)
    result = {"pairs": args.pairs, "rate": args.rate}
    try:
        agent.await_status(lambda s: any(i["name"] == UPLINK for i in s["interfaces"]), timeout=30)
        time.sleep(2)  # the startup events' hooks
        result["idle_rss_kib"] = status_kib(agent.pid, "VmRSS")
        idle_cpu = agent.cpu_ms()
        time.sleep(5)
        result["idle_cpu_ms_per_s"] = (agent.cpu_ms() - idle_cpu) / 5

        for _ in range(args.toggles):
            toggler.flip()
            time.sleep(0.2)
        idle = hook_starts(toggler.changes, agent.stamp_file)
        result["idle_hook_start_ms"] = idle
        result["idle_hook_start_median_ms"] = median(sorted(v for v in idle if v is not None))

        def batch(lines):
            path = os.path.join(work, "batch")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            proc = toggler.background()
            subprocess.run(["ip", "-n", args.ns, "-batch", path], check=True)
            toggler.collect(proc)

        result["batch"] = burst(
            agent, toggler, "batch",
            lambda: batch([line for i in range(args.pairs) for line in add_lines(i, args.ctr_ns)]),
            lambda: batch([f"link del {host_end(i)}" for i in range(args.pairs)]),
            args.pairs)

        def paced(lines_per_pair):
            ip = subprocess.Popen(["ip", "-n", args.ns, "-batch", "-"], stdin=subprocess.PIPE, text=True)
            done = threading.Event()

            def flips():
                while not done.wait(args.paced_toggle_every):
                    toggler.flip()

            flipper = threading.Thread(target=flips, daemon=True)
            flipper.start()
            start = time.monotonic()
            for i in range(args.pairs):
                time.sleep(max(0, start + i / args.rate - time.monotonic()))
                ip.stdin.write("\n".join(lines_per_pair(i)) + "\n")
                ip.stdin.flush()
            ip.stdin.close()
            status = ip.wait()
            done.set()
            flipper.join()
            if status != 0:
                sys.exit("ip -batch - failed")

        result["paced"] = burst(
            agent, toggler, "paced",
            lambda: paced(lambda i: add_lines(i, args.ctr_ns)),
            lambda: paced(lambda i: [f"link del {host_end(i)}"]),
            args.pairs)
    finally:
        agent.stop()
    all_strangers = strangers(agent.stamp_file, 0)
    result["hooks_for_others_total"] = len(all_strangers)
    result["hooks_for_others_sample"] = all_strangers[:5]
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()
