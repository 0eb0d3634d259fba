#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Hook-start latency (issues 4, 14): a link change → the first line a hook writes, for four hook
runners, each on namespaces of its own, with the same hook and the same toggles.

  ip monitor | sh   `ip -o monitor link` piped into a /bin/sh read-loop that runs the hook for
                    every line: the floor for a hook started by a shell (peers.md);
  netplug           `netplugd -F -c /dev/null -i LINK -s HOOK` (Debian package netplug); it
                    runs `HOOK LINK in|out|probe`;
  netpathd          dispatcher mode (no [[rule]]: every event runs every hook), settle "0s",
                    startup_events false, the hook alone in its hooks_dir; `HOOK LINK EVENT`
                    with the event's JSON on stdin.
  netpathd-link     the same netpathd with one [[rule]]: the hook runs for the watched link's
                    carrier-up and carrier-down events only, i.e. once per link change, as
                    netplug runs its hook (in/out). Like for like with netplug, while the
                    dispatcher-mode runner starts 2-3 hooks per change.
  netpathd-link-b   the same as netpathd-link, run by another build's netpathd (--netpathd-b):
                    in the same rotation, so that the two builds are measured on and off in one
                    run, each paired against netplug (bench/run.sh's BENCH_COMPARE_BUILD).

The hook is one /bin/sh script, the same file for all three: its first statement execs
bench/out/hookstamp, which reads CLOCK_REALTIME first thing and appends `ts_ns ARGS...` to a
stamps file with one write(). bench/out/toggle stamps CLOCK_REALTIME right before each ioctl.
Latency = the first stamp after a toggle (and before the next) minus the toggle's stamp, matched
as in latency.py; a toggle with no stamp in its window counts as missed.

The listeners run at once, each on namespaces of its own (--listener, --ns and --peer-ns,
given once per listener, in the same order), and the changes go to them in rotation: the first
listener's link, --gap-ms later the second's, …, then the first's again (bench/out/toggle
--rotate); netpathd's two configurations in rotations of their own (rotations() says why). A
listener sees only its own link's changes (netlink is per namespace), and its hook is done long
before the next change of any link, so at any moment one of them is working, as when they took
turns; but the machine's speed, which drifts by a few hundred microseconds within minutes on these
shared machines (BENCHMARKS.md), is now the same for all of them change by change, not minute by
minute. Each gets the same toggles: --warmup + --count of the veth peer (carrier: the watched
link's carrier follows), then of the watched link itself (admin); then, with --batch-routes, the
first change right after a route batch in its own namespace (batch_order()). Fresh namespaces per
invocation (bench/run.sh), because an admin down makes the kernel flush the link's IPv4 routes and
IPv6 addresses, and netpathd's events depend on them. Writes one JSON result per
listener to --out, whose `{runner}` is replaced by the listener's name (--work likewise).
"""

import argparse
import atexit
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from common import MachineLoad, in_ns, median
from latency import match, run_toggles, summarize

HOOK_NAME = "50-stamp"


def write_hook(hooks_dir, stamp, stamps):
    """The hook every listener runs: root-owned 0755, in a 0755 directory (netpathd's trust
    rules; the others run anything executable)."""
    os.makedirs(hooks_dir, exist_ok=True)
    os.chmod(hooks_dir, 0o755)
    hook = os.path.join(hooks_dir, HOOK_NAME)
    with open(hook, "w") as f:
        f.write("#!/bin/sh\n"
                "# bench/hooks.py: stamp first (argv: INTERFACE EVENT), then drain stdin and exit 0.\n"
                f'exec {stamp} {stamps} "$@"\n')
    os.chmod(hook, 0o755)
    return hook


def netpathd_config(work, hooks_dir, link_rule=None):
    """Dispatcher mode (every event runs every hook), or with `link_rule` set to a link name,
    one rule that runs the hook for that link's carrier-up / carrier-down events only."""
    path = os.path.join(work, "netpathd.toml")
    with open(path, "w") as f:
        f.write("# bench/hooks.py: " + ("one rule: the link's carrier events run the hook.\n" if link_rule
                                        else "dispatcher mode, no rules: every event runs every hook.\n")
                + "[agent]\n"
                f'hooks_dir = "{hooks_dir}"\n'
                'hook_timeout = "10s"\n'
                'settle = "0s"\n'
                "startup_events = false\n"
                'metrics = ""\n')
        if link_rule:
            f.write("\n[[rule]]\n"
                    'name = "link-changes"\n'
                    'on = ["carrier-up", "carrier-down"]\n'
                    f'interface = "{link_rule}"\n')
    return path


class Listener:
    """One hook runner, started in its own session so the whole group (a shell pipeline too)
    is stopped by our own process group id."""

    def __init__(self, name, argv, log, ready):
        self.name, self.argv, self.log, self.ready = name, argv, log, ready
        self.proc = None

    def start(self):
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True)
        deadline = time.monotonic() + 20
        while not self.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"{self.name} did not start: " + open(self.log).read()[-2000:])
            time.sleep(0.05)
        time.sleep(1.0)  # let start-up work (netplug's probe/in, netpathd's dump) settle

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue


def read_stamps(path):
    """[(ts_ns, event)] from the hook's stamps file."""
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if parts:
                    out.append((int(parts[0]), parts[2] if len(parts) > 2 else "-"))
    return sorted(out)


def first_events(toggles, stamps, gap_ns, window_ns=None):
    """Which event the first hook after each toggle was run for, and how many hook runs each
    toggle caused (stamps in its window: until the next toggle, or `window_ns`), by direction."""
    firsts, runs = {}, []
    i = 0
    for k, (_, ts, state) in enumerate(toggles):
        end = toggles[k + 1][1] if k + 1 < len(toggles) else ts + gap_ns
        if window_ns is not None:
            end = min(end, ts + window_ns)
        while i < len(stamps) and stamps[i][0] < ts:
            i += 1
        j = i
        while j < len(stamps) and stamps[j][0] < end:
            j += 1
        runs.append(j - i)
        if j > i:
            key = f"{state}: {stamps[i][1]}"
            firsts[key] = firsts.get(key, 0) + 1
    return firsts, (sum(runs) / len(runs) if runs else 0.0)


def netpathd_event_times(log):
    """When netpathd logged each event it decided to dispatch (`info netpathd: interface ...` /
    `path ...`, µs wall-clock stamps): the point between the engine and the hook's start."""
    out = []
    pattern = re.compile(r"^(\S+) info netpathd: (interface|path) ")
    with open(log) as f:
        for line in f:
            m = pattern.match(line)
            if m:
                t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z")
                out.append(int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000)
    return out


def by_direction(toggles, latencies):
    out = {}
    for direction in ("down", "up"):
        got = sorted(lat / 1000.0 for (_, _, state), lat in zip(toggles, latencies)
                     if state == direction and lat is not None)
        out[direction] = median(got)
    return out


def route_batch(namespace, verb, routes):
    """`ip -batch` adding or deleting `routes` blackhole /32 routes in `namespace`."""
    script = "".join(f"route {verb} blackhole 10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}/32\n"
                     for i in range(routes))
    subprocess.run(in_ns(namespace, ["ip", "-batch", "-"]), input=script, text=True, check=True)


def toggles_after_batches(args, targets):
    """Issue 14: the first change right after a large route batch. For each (namespace, peer
    namespace, count) of `targets`, `count` times, `ip -batch` adds (then, the next time, deletes)
    --batch-routes blackhole /32 routes in the watched namespace, and the peer's carrier is toggled
    the moment it exits (down, then up 40 ms later so the link ends as it started); each batch's
    first toggle is measured. The targets take turns batch by batch, in their order, as long as
    each has batches left. Returns each target's toggles."""
    toggles = [[] for _ in targets]
    for batch in range(max((count for _, _, count in targets), default=0)):
        verb = "add" if batch % 2 == 0 else "del"
        for k, (namespace, peer_namespace, count) in enumerate(targets):
            if batch < count:
                route_batch(namespace, verb, args.batch_routes)
                toggles[k].append(run_toggles(args.toggle, peer_namespace, args.peer_link, 2, args.gap_ms)[0])
                time.sleep(0.5)
    # One batch more where the count was odd: nothing may be left behind in the namespaces.
    for namespace, _, count in targets:
        if count % 2:
            route_batch(namespace, "del", args.batch_routes)
    return toggles


def rotated_toggles(toggle, targets, count, gap_ms):
    """bench/out/toggle --rotate over `targets` ((namespace, link) each): `count` changes of
    each, one every `gap_ms` in rotation. Returns each target's toggles as run_toggles does."""
    argv = [toggle, "--rotate", str(count), str(gap_ms)] + [part for target in targets for part in target]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    toggles = [[] for _ in targets]
    for line in out.splitlines():
        seq, ts, state, target = line.split()
        toggles[int(target)].append((int(seq), int(ts), state))
    return toggles


def runner_arguments(description, listeners, count, count_help, many=False):
    """The command line bench/hooks.py and bench/hooktrace.py share: namespaces, link, which
    runner, the binaries and helpers, the toggles. Parsed; --count and --warmup checked even.
    With `many`, --listener, --ns and --peer-ns are given once per listener, in the same order."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    each = "append" if many else "store"
    ap.add_argument("--ns", required=True, action=each, help="namespace of the watched link and the hook runner")
    ap.add_argument("--peer-ns", required=True, action=each, help="namespace of the veth peer")
    ap.add_argument("--link", required=True)
    ap.add_argument("--peer-link", required=True)
    ap.add_argument("--listener", required=True, choices=listeners, action=each)
    ap.add_argument("--netpathd", required=True)
    ap.add_argument("--netpathd-b", help="another build's netpathd, for the netpathd-link-b runner")
    ap.add_argument("--netplugd", default="netplugd")
    ap.add_argument("--perf", default="perf", help="(bench/hooktrace.py) the perf binary")
    ap.add_argument("--toggle", required=True)
    ap.add_argument("--stamp", required=True, help="the hookstamp helper (bench/hookstamp.c)")
    ap.add_argument("--work", required=True, help="directory for the hook, its stamps, traces and logs")
    ap.add_argument("--count", type=int, default=count, help=count_help)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--gap-ms", type=int, default=40)
    ap.add_argument("--batch-routes", type=int, default=0,
                    help="(bench/hooks.py) also measure the first change right after an `ip -batch` of this many routes")
    ap.add_argument("--batches", type=int, default=6,
                    help="(bench/hooks.py) how many such batches for netplug and the link rule (the targets' pair)")
    ap.add_argument("--other-batches", type=int, default=None,
                    help="(bench/hooks.py) how many for the other runners (default: --batches)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.count % 2 or args.warmup % 2:
        sys.exit("--count and --warmup must be even (the link must end as it started)")
    if many and not len(args.listener) == len(args.ns) == len(args.peer_ns):
        sys.exit("--listener, --ns and --peer-ns must be given as many times each")
    if "netpathd-link-b" in (args.listener if many else [args.listener]) and not args.netpathd_b:
        sys.exit("the netpathd-link-b runner needs --netpathd-b")
    return args


def prepare_work(args, work=None, tag=""):
    """The work directory (`work`, else --work), the stamps file path, the hooks directory and
    the hook written into it.

    The hooks directory is /run/netpath-bench-PID[-TAG]/hooks.d, removed at exit: as many directories
    from `/` as the default /etc/netpath/hooks.d, since netpathd checks every one of them before
    each run (TrustedPath), and a hook in the checkout (/work/…/bench/out/results-…/…) would
    charge it for a walk twice as deep as an installed agent's."""
    work = os.path.abspath(work or args.work)
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    stamps = os.path.join(work, "stamps")
    top = f"/run/netpath-bench-{os.getpid()}" + (f"-{tag}" if tag else "")
    atexit.register(shutil.rmtree, top, True)
    # run.sh stops a phase with SIGTERM: leave through sys.exit, so the directory is removed.
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    os.makedirs(top, exist_ok=True)
    os.chmod(top, 0o755)
    hooks_dir = os.path.join(top, "hooks.d")
    return work, stamps, hooks_dir, write_hook(hooks_dir, os.path.abspath(args.stamp), stamps)


RUNNERS = ["ip", "netplug", "netpathd", "netpathd-link", "netpathd-link-b"]
# The runners with the link rule: the current build's, and another build's to compare with.
LINK_RULE = {"netpathd-link", "netpathd-link-b"}
# The pair the targets compare (and the other build's link rule, paired with netplug likewise):
# the ones most batches are for (--batches), since a p99 of the first change after a batch needs a
# hundred of them.
PAIRED = {"netplug"} | LINK_RULE


def listener_for(runner, args, ns, work, stamps, hook, config):
    """The Listener that runs `runner` in namespace `ns` with `hook` (its stamps go to `stamps`)."""
    socket_path = os.path.join(work, "netpathd.sock")
    if runner == "ip":
        loop = f'ip -o monitor link | while read -r line; do {hook} "$0" link </dev/null; done'
        return Listener("ip monitor | sh", in_ns(ns, ["/bin/sh", "-c", loop, args.link]),
                        os.path.join(work, "sh-loop.log"), lambda: True)
    if runner == "netplug":
        return Listener("netplug", in_ns(ns, [args.netplugd, "-F", "-c", "/dev/null", "-i", args.link, "-s", hook]),
                        os.path.join(work, "netplug.log"), lambda: os.path.exists(stamps))
    names = {"netpathd-link": "netpathd (link rule)", "netpathd-link-b": "netpathd B (link rule)"}
    name = names.get(runner, "netpathd")
    binary = args.netpathd_b if runner == "netpathd-link-b" else args.netpathd
    return Listener(name, in_ns(ns, [binary, "--config", config, "--control-socket", socket_path]),
                    os.path.join(work, "netpathd.log"), lambda: os.path.exists(socket_path))


def rotations(runners):
    """The rotations, in the order they run: each a list of runners whose links are changed in
    turn, and the names of those whose changes count there.

    netpathd's two configurations are never in the same rotation: they run the same code, so the
    one's change would leave that code in the caches for the other's, 40 ms later, where netplug's
    own code last ran a whole rotation before. The dispatcher-mode runner gets a rotation of its
    own, with the others but the link-rule runner changed in between as in the main one (the same
    spacing and the same work between its changes), their changes there not counted. It runs
    first, so that the main rotation's runners have all just been at work when the route batches
    follow (each rotation starts with --warmup changes of every runner). Another build's link
    rule (netpathd-link-b) is in both, counted in the main one beside the current build's: another
    file, so the two share no code pages in the caches, only the C libraries, as netplug does."""
    names = [r["runner"] for r in runners]
    if "netpathd" in names and "netpathd-link" in names:
        return [([r for r in runners if r["runner"] != "netpathd-link"], {"netpathd"}),
                ([r for r in runners if r["runner"] != "netpathd"], set(names) - {"netpathd"})]
    return [(runners, set(names))]


def batch_order(groups, runners):
    """The order of the route batches within one pass: the main rotation's runners (the last of
    `groups`, from rotations()) in their order, so that netplug's batch and the link rule's are
    next to each other, then the dispatcher-mode runner's."""
    main = groups[-1][0]
    return main + [r for r in runners if r not in main]


def summarize_runner(listener, runs, stamps_file, gap_ns, machine_load):
    """One listener's result: per kind of toggle, the hook start's figures and samples."""
    got = read_stamps(stamps_file)
    per = {"machine_load": machine_load, "kinds": {}}
    for kind, toggles in runs.items():
        # A batch's measured change (down) is followed by its up change one gap later, not by the
        # next measured one: its window ends there.
        window = gap_ns if kind == "after-batch" else None
        latencies = match(toggles, [ts for ts, _ in got], gap_ns, window)
        s = summarize(latencies)
        s["median_by_direction_us"] = by_direction(toggles, latencies)
        s["first_event"], s["hook_runs_per_toggle"] = first_events(toggles, got, gap_ns, window)
        logged = [None] * len(toggles)
        if listener.name.startswith("netpathd"):
            logged = match(toggles, netpathd_event_times(listener.log), gap_ns, window)
            s["event_logged"] = summarize(logged)
            # Per toggle: from the event's log line to the first hook's stamp.
            spans = sorted((h - e) / 1000.0 for h, e in zip(latencies, logged) if h is not None and e is not None)
            s["logged_to_hook_median_us"] = median(spans)
        # Per toggle, for bench/hookrounds.py to pool rounds: direction, hook start and
        # netpathd's log line (ns after the change; null when missed).
        s["samples"] = [[state, lat, log] for (_, _, state), lat, log in zip(toggles, latencies, logged)]
        per["kinds"][kind] = s
    return per


def main():
    args = runner_arguments(__doc__, RUNNERS, 200, "measured toggles per kind and listener", many=True)
    gap_ns = args.gap_ms * 1_000_000
    if len(set(args.listener)) != len(args.listener):
        sys.exit("each --listener at most once")
    if len(args.listener) > 1 and not ("{runner}" in args.work and "{runner}" in args.out):
        sys.exit("with several listeners, --work and --out must hold {runner} (each needs its own)")

    runners = []
    for runner, ns, peer_ns in zip(args.listener, args.ns, args.peer_ns):
        work, stamps, hooks_dir, hook = prepare_work(args, args.work.replace("{runner}", runner), runner)
        config = netpathd_config(work, hooks_dir, link_rule=args.link if runner in LINK_RULE else None)
        if os.path.exists(stamps):
            os.unlink(stamps)
        runners.append({"runner": runner, "ns": ns, "peer_ns": peer_ns, "work": work, "stamps": stamps,
                        "hook": hook, "config": config,
                        "listener": listener_for(runner, args, ns, work, stamps, hook, config),
                        "runs": {}})
    listeners = [r["listener"] for r in runners]
    groups = rotations(runners)
    ordered = batch_order(groups, runners)
    try:
        print("   hooks: " + "; then ".join(", ".join(r["listener"].name for r in group)
                                           for group, _ in groups) + ": changes in rotation", file=sys.stderr)
        load = MachineLoad().start()
        for listener in listeners:
            listener.start()
        for kind, carrier in (("carrier", True), ("admin", False)):
            for group, counted in groups:
                targets = [(r["peer_ns"], args.peer_link) if carrier else (r["ns"], args.link) for r in group]
                for r, toggles in zip(group, rotated_toggles(args.toggle, targets, args.warmup + args.count,
                                                             args.gap_ms)):
                    if r["runner"] in counted:
                        r["runs"][kind] = toggles[args.warmup:]
                time.sleep(0.5)
        if args.batch_routes:
            others = args.batches if args.other_batches is None else args.other_batches
            counts = [args.batches if r["runner"] in PAIRED else others for r in ordered]
            targets = [(r["ns"], r["peer_ns"], count) for r, count in zip(ordered, counts)]
            for r, toggles in zip(ordered, toggles_after_batches(args, targets)):
                r["runs"]["after-batch"] = toggles
        for listener in listeners:
            if not listener.alive():
                sys.exit(f"{listener.name} exited early: " + open(listener.log).read()[-2000:])
        for listener in listeners:
            listener.stop()
        machine_load = load.stop()
        time.sleep(0.2)
    finally:
        for listener in listeners:
            listener.stop()

    for r in runners:
        listener = r["listener"]
        slug = listener.name.split()[0].replace("|", "")
        kept = os.path.join(r["work"], f"stamps-{slug}")
        if os.path.exists(r["stamps"]):
            os.rename(r["stamps"], kept)
        for kind, toggles in r["runs"].items():
            with open(os.path.join(r["work"], f"toggles-{slug}-{kind}"), "w") as f:
                f.writelines(f"{seq} {ts} {state}\n" for seq, ts, state in toggles)
        results = {"count": args.count, "warmup": args.warmup, "gap_ms": args.gap_ms,
                   "batch_routes": args.batch_routes, "batches": len(r["runs"].get("after-batch", [])),
                   "rotation": len(groups[-1][0]),
                   # The order the changes went in: each rotation's runners, then the batches'.
                   "order": [[g["runner"] for g in group] for group, _ in groups]
                   + [[g["runner"] for g in ordered]],
                   "hook": open(r["hook"]).read(), "netpathd_config": open(r["config"]).read(),
                   "listeners": {listener.name: summarize_runner(listener, r["runs"], kept, gap_ns, machine_load)}}
        with open(args.out.replace("{runner}", r["runner"]), "w") as f:
            json.dump(results, f, indent=2)
        for name, per in results["listeners"].items():
            for kind, s in per["kinds"].items():
                d = s["median_by_direction_us"]
                print(f"hooks {kind:11} {name:20} median {s['median_us']} us  p99 {s['p99_us']} us  "
                      f"(down {d['down']} / up {d['up']})  {s['matched']}/{s['toggles']} matched, "
                      f"{s['hook_runs_per_toggle']:.1f} hook runs per toggle; first: {s['first_event']}",
                      file=sys.stderr)
                if "event_logged" in s:
                    print(f"      netpathd event logged: median {s['event_logged']['median_us']} us; logged → hook "
                          f"stamp median {s['logged_to_hook_median_us']} us", file=sys.stderr)


if __name__ == "__main__":
    main()
