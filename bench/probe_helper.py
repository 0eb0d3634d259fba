#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""The probe helper's cost: RSS and CPU of netpath-probe per probe (issue 21).

    sudo bench/probe_helper.py [BUILD_DIR]        (default .build/install/release)

Builds two throwaway network namespaces (the helper's, and one with the test endpoint,
Tests/Fixtures/probe/endpoint.py), starts BUILD_DIR/netpath-probe as netpathd does (its socket as
fd 3; as root it drops to nobody and confines itself) and sends it PROBES probes of each kind
(default 200): 204 (full), a login page (portal), 10 MB of headers and an endless body (hostile).
Prints, as markdown, the helper's RSS after start, after each kind, its peak, and its CPU time
per probe. The namespaces are deleted on exit, whatever happens. `make bench` runs it (bench/run.sh).
"""
import os
import random
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/install/release")
HELPER = os.path.realpath(os.path.join(BUILD_DIR, "netpath-probe"))
PROBES = int(os.environ.get("PROBES", "200"))
TAG = "%08x" % random.getrandbits(32)
PROBE_NS, SERVER_NS = "nptest-bprobe-" + TAG, "nptest-bsrv-" + TAG


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True)


def status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def kib(pid, key):
    return int(status(pid)[key].split()[0])


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    if os.geteuid() != 0:
        sys.exit("probe_helper.py needs root (network namespaces)")
    if not os.access(HELPER, os.X_OK):
        sys.exit("%s is missing: make install-build" % HELPER)
    server = helper = None
    try:
        ip("netns", "add", PROBE_NS)
        ip("netns", "add", SERVER_NS)
        ip("-n", PROBE_NS, "link", "set", "lo", "up")
        ip("-n", SERVER_NS, "link", "set", "lo", "up")
        ip("-n", PROBE_NS, "link", "add", "up0", "type", "veth", "peer", "name", "srv0", "netns", SERVER_NS)
        ip("-n", PROBE_NS, "addr", "add", "10.9.0.1/24", "dev", "up0")
        ip("-n", PROBE_NS, "link", "set", "up0", "up")
        ip("-n", SERVER_NS, "addr", "add", "10.9.0.2/24", "dev", "srv0")
        ip("-n", SERVER_NS, "link", "set", "srv0", "up")
        server = subprocess.Popen(
            ["ip", "netns", "exec", SERVER_NS, "python3", os.path.join(ROOT, "Tests/Fixtures/probe/endpoint.py"), "8080"],
            stdout=subprocess.PIPE)
        assert server.stdout.readline().strip() == b"ready"

        ours, theirs = socket.socketpair()
        helper = subprocess.Popen(
            ["ip", "netns", "exec", PROBE_NS, "sh", "-c", 'exec 3<&%d %d<&- "$0" --mode http' % (theirs.fileno(), theirs.fileno()), HELPER],
            pass_fds=(theirs.fileno(),), env={})
        theirs.close()
        lines = ours.makefile("rwb", buffering=0)
        hello = lines.readline()
        assert hello.startswith(b"hello "), hello
        pid = helper.pid
        rows = [("after start", kib(pid, "VmRSS"), None)]
        probe_id = 0
        for kind, path in [("204 (full)", "/204"), ("login page (portal)", "/page"),
                           ("10 MB of headers", "/headers"), ("endless body", "/endless")]:
            cpu = cpu_seconds(pid)
            for _ in range(PROBES):
                probe_id += 1
                lines.write(b"probe %d up0 2 5000 http http://10.9.0.2:8080%s -\n" % (probe_id, path.encode()))
                answer = lines.readline()
                assert answer.startswith(b"result %d " % probe_id), answer
            per_probe = (cpu_seconds(pid) - cpu) / PROBES
            rows.append(("after %d × %s" % (PROBES, kind), kib(pid, "VmRSS"), per_probe))
        peak = kib(pid, "VmHWM")
        # The helper exits when its socket ends.
        lines.close()
        ours.close()
        helper.wait(timeout=10)
        print("| netpath-probe (%s) | RSS (KiB) | CPU per probe (ms) |" % os.path.relpath(HELPER, ROOT))
        print("|---|---:|---:|")
        for label, rss, per_probe in rows:
            print("| %s | %d | %s |" % (label, rss, "" if per_probe is None else "%.2f" % (per_probe * 1000)))
        print("| peak (VmHWM) | %d | |" % peak)
    finally:
        if helper and helper.poll() is None:
            helper.kill()
            helper.wait()
        if server:
            server.kill()
            server.wait()
        for ns in (PROBE_NS, SERVER_NS):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
