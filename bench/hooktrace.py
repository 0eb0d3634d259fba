#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Where a hook's start goes (issue 4): one hook runner, traced by the kernel.

bench/hooks.py measures a link change → the hook's first line from the processes' own clocks.
This splits that span for one runner with kernel tracepoints (`perf record -a`), so the stages
are measured the same way for every runner and none of them has to stamp itself:

  change      the toggle's SIOCSIFFLAGS ioctl enters the kernel (t = 0);
  read        the runner's first recvmsg() after it: the kernel has queued the netlink
              message and woken the runner;
  fork        the runner asks for the hook's process (clone/clone3 entered by the thread
              whose child later execs the hook);
  exec        that child has exec'd the hook (sched_process_exec: the `#!` script's `sh`);
  first line  the hook's first write() (bench/out/hookstamp, exec'd by the script).

Run it with the same namespaces and hook as bench/hooks.py (--listener netplug, netpathd-link
or netpathd-link-b, one hook run per change); --count carrier toggles of the veth peer, --gap-ms
apart, after --warmup. The tracepoints cost each traced process a little, so the absolute
figures sit slightly above bench/hooks.py's; the comparison between runners is the point.
Writes a JSON result to --out.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from common import in_ns, median, percentile
from hooks import LINK_RULE, listener_for, netpathd_config, prepare_work, runner_arguments
from latency import run_toggles

STAGES = ["read", "fork", "exec", "first_line"]

# perf applies a --filter to the -e just before it. Writes are filtered to small ones (the hook's
# line is ~40 bytes) and to other processes than perf: its own writes of the trace are small too,
# and traced they fed the trace back to itself, keeping one of the two CPUs busy with perf.
EVENTS = [
    "-e", "syscalls:sys_enter_ioctl",
    "-e", "syscalls:sys_enter_recvmsg",
    "-e", "syscalls:sys_enter_recvmmsg",
    "-e", "syscalls:sys_enter_clone",
    "-e", "syscalls:sys_enter_clone3",
    "-e", "sched:sched_process_fork",
    "-e", "sched:sched_process_exec",
    "-e", "syscalls:sys_enter_write", "--filter", "count < 256", "--exclude-perf",
]

LINE = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+(?P<time>\d+\.\d+):\s+(?P<event>\S+):\s*(?P<args>.*)$")


def parse(script_text):
    """[(time_us, comm, pid, tid, event, args)] from `perf script -F comm,pid,tid,time,event,trace`."""
    out = []
    for line in script_text.splitlines():
        m = LINE.match(line)
        if m:
            out.append((float(m["time"]) * 1e6, m["comm"], int(m["pid"]), int(m["tid"]),
                        m["event"].rstrip(":"), m["args"]))
    return out


def stages(events, runner_pid, toggle_pid):
    """Per toggle of process `toggle_pid`: {stage: µs after the change}, or None where a stage
    is missing (no hook ran in the toggle's window)."""
    changes = [i for i, e in enumerate(events)
               if e[2] == toggle_pid and e[4] == "syscalls:sys_enter_ioctl" and "cmd: 0x00008914" in e[5]]
    result = []
    for k, i in enumerate(changes):
        t0 = events[i][0]
        end = events[changes[k + 1]][0] if k + 1 < len(changes) else float("inf")
        window = [e for e in events[i + 1:] if e[0] < end]
        # netplug reads with recvmsg, netpathd's engine with recvmmsg (several datagrams a call).
        read = next((e for e in window if e[2] == runner_pid
                     and e[4] in ("syscalls:sys_enter_recvmsg", "syscalls:sys_enter_recvmmsg")), None)
        # The hook: the first exec of a process the runner forked (other programs starting on
        # the machine meanwhile are not it).
        children = {int(m.group(1)) for e in window if e[2] == runner_pid and e[4] == "sched:sched_process_fork"
                    for m in [re.search(r"child_pid=(\d+)", e[5])] if m}
        exec_event = next((e for e in window if e[4] == "sched:sched_process_exec" and e[2] in children), None)
        if read is None or exec_event is None:
            result.append(None)
            continue
        child = exec_event[2]
        fork = next(e for e in window if e[2] == runner_pid and e[4] == "sched:sched_process_fork"
                    and re.search(rf"child_pid={child}\b", e[5]))
        parent_tid = fork[3]
        clone = None
        for e in window:
            if e[0] > fork[0]:
                break
            if e[3] == parent_tid and e[4] in ("syscalls:sys_enter_clone", "syscalls:sys_enter_clone3"):
                clone = e
        line = next((e for e in window if e[2] == child and e[1] == "hookstamp"
                     and e[4] == "syscalls:sys_enter_write" and e[0] > exec_event[0]), None)
        if clone is None or line is None:
            result.append(None)
            continue
        got = {"read": read[0] - t0, "fork": clone[0] - t0, "exec": exec_event[0] - t0, "first_line": line[0] - t0}
        result.append(got)
    return result


def summarize(per_toggle):
    ok = [s for s in per_toggle if s is not None]
    out = {"toggles": len(per_toggle), "traced": len(ok), "median_us": {}, "p90_us": {}}
    for stage in STAGES:
        values = sorted(s[stage] for s in ok)
        out["median_us"][stage] = round(median(values), 1) if values else None
        out["p90_us"][stage] = round(percentile(values, 90), 1) if values else None
    spans = {"change_to_read": ("read", None), "read_to_fork": ("fork", "read"),
             "fork_to_first_line": ("first_line", "fork"), "fork_to_exec": ("exec", "fork"),
             "exec_to_first_line": ("first_line", "exec")}
    out["span_median_us"] = {}
    for name, (later, earlier) in spans.items():
        values = sorted(s[later] - (s[earlier] if earlier else 0.0) for s in ok)
        out["span_median_us"][name] = round(median(values), 1) if values else None
    return out


def start_perf(perf_binary, data, work):
    """`perf record -a` of EVENTS, returned once its events are open and enabled: it starts
    disabled and acknowledges an `enable` on its control FIFOs (perf ≥ 5.10)."""
    control, ack = os.path.join(work, "perf.ctl"), os.path.join(work, "perf.ack")
    for fifo in (control, ack):
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)
    log = os.path.join(work, "perf.log")
    perf = subprocess.Popen([perf_binary, "record", "-q", "-a", "-D", "-1", "--control", f"fifo:{control},{ack}",
                             "-o", data, *EVENTS], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    answer = []

    def handshake():
        # Each open blocks until perf opens the other end.
        with open(control, "w") as ctl, open(ack) as acknowledgement:
            ctl.write("enable\n")
            ctl.flush()
            answer.append(acknowledgement.readline().strip())

    waiter = threading.Thread(target=handshake, daemon=True)
    waiter.start()
    waiter.join(30)
    if answer != ["ack"]:
        perf.kill()
        sys.exit("perf record did not start: " + open(log).read()[-2000:])
    return perf


def main():
    # run.sh's cleanup sends SIGTERM: leave through the finally below, which stops perf (it
    # traces the whole machine, outside the namespaces run.sh deletes).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("hooktrace.py: terminated"))
    args = runner_arguments(__doc__, ["netplug", *sorted(LINK_RULE)], 100, "traced carrier toggles")

    work, stamps, hooks_dir, hook = prepare_work(args)
    config = netpathd_config(work, hooks_dir, link_rule=args.link) if args.listener in LINK_RULE else None
    listener = listener_for(args.listener, args, args.ns, work, stamps, hook, config)
    name = listener.name

    data = os.path.join(work, "perf.data")
    perf = None
    try:
        listener.start()
        run_toggles(args.toggle, args.peer_ns, args.peer_link, args.warmup, args.gap_ms)
        time.sleep(0.3)
        perf = start_perf(args.perf, data, work)
        # The toggle helper runs as a child of `ip netns exec`, which execs it: that pid is ours.
        proc = subprocess.Popen(in_ns(args.peer_ns, [args.toggle, args.peer_link, str(args.count), str(args.gap_ms)]),
                                stdout=subprocess.PIPE, text=True)
        proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"the toggle helper failed (exit {proc.returncode})")
        toggle_pid = proc.pid
        time.sleep(0.3)
        perf.send_signal(signal.SIGINT)
        perf.wait(30)
        if not listener.alive():
            sys.exit(f"{name} exited early: " + open(listener.log).read()[-2000:])
        runner_pid = listener.proc.pid
    finally:
        if perf is not None and perf.poll() is None:
            perf.kill()
        listener.stop()

    script = subprocess.run([args.perf, "script", "-i", data, "-F", "comm,pid,tid,time,event,trace"],
                            capture_output=True, text=True)
    if script.returncode != 0:
        sys.exit("perf script failed: " + script.stderr[-2000:])
    script = script.stdout
    per_toggle = stages(parse(script), runner_pid, toggle_pid)
    result = {"listener": name, "count": args.count, "warmup": args.warmup, "gap_ms": args.gap_ms, **summarize(per_toggle)}
    os.unlink(data)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    m = result["median_us"]
    print(f"   traced {name}: {result['traced']}/{result['toggles']} toggles; medians µs: "
          + ", ".join(f"{stage} {m[stage]}" for stage in STAGES), file=sys.stderr)


if __name__ == "__main__":
    main()
