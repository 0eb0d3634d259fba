#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates build-support/netpath.order, the symbol order the installed binaries are linked with
# (`make order`; the Makefile's INSTALL_SWIFT_FLAGS says why). Needs root: it runs netpathd in
# network namespaces of its own, which it deletes on exit.
#
# The order is the functions in the order of their first call (build-support/firstcalls.c):
#   1. netpathd: start-up on a config with one link rule and one hook, and connectivity probing
#      of an endpoint in the peer namespace (bench/connectivity.py's, a portal, then full
#      internet), carrier and administrative toggles that run the hook and the probes, an address
#      and a route added and removed, `netpathctl status` over the control socket, then SIGTERM;
#      the probe helper it starts runs under firstcalls too (a copy of netpathd finds, beside
#      itself, a `netpath-probe` that execs the real one so);
#   2. `netpathctl monitor --local`: start-up and the same changes;
#   3. `netpathctl status --local` and `netpathctl check-config`;
#   4. the probe helper's own list, from 1.
# Before all of them: the functions netpathd runs between reading a link change and spawning
# its hook (bench/pathcost.sh, under callgrind), ours in the order of 1., then the toolchain's.
# They run once per change, with the caches and TLBs cold after the idle time between changes;
# spread among start-up's functions over 6.5 MB of code they touched 277 pages of 4 KiB, laid
# out together ~130 (~50 of them ours, the rest in the toolchain's objects), and a change's way to
# its hook's fork took ~50 µs less (BENCHMARKS.md). (The linker can place each of our functions
# on its own because install-build compiles with -function-sections: the Makefile.)
# Later lists add only the names earlier ones lack. Names a binary does not have are skipped by
# the linker, so one file serves every binary.
#
# Environment: BUILD_DIR (default .build/install/release: `make install-build` builds it first).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-.build/install/release}
NETPATHD=$(realpath "$BUILD_DIR/netpathd")
NETPATHCTL=$(realpath "$BUILD_DIR/netpathctl")
HELPER=$(realpath "$BUILD_DIR/netpath-probe")
# In /run: the agent refuses hooks below a directory that is not root's or that others can write
# to (/tmp, a home directory, a checkout with umask 002).
WORK=$(mktemp -d /run/netpath-order.XXXXXX)
PREFIX="npo-$$"
. bench/namespaces.sh
trap 'cleanup; rm -rf "$WORK"' EXIT

cc -O2 -Wall -o "$WORK/firstcalls" build-support/firstcalls.c
cc -O2 -o "$WORK/toggle" bench/toggle.c
symbols() { nm --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' > "$2"; }
symbols "$NETPATHD" "$WORK/netpathd.symbols"
symbols "$NETPATHCTL" "$WORK/netpathctl.symbols"
symbols "$HELPER" "$WORK/probe.symbols"
# netpathd runs the helper it finds beside itself: here, one that runs the real one traced.
mkdir -m 0755 "$WORK/bin"
cp "$NETPATHD" "$WORK/bin/netpathd"
printf '#!/bin/sh\nexec %s %s 120 %s %s "$@"\n' "$WORK/firstcalls" "$WORK/probe.symbols" "$WORK/probe.order" \
    "$HELPER" > "$WORK/bin/netpath-probe"
chmod 0755 "$WORK/bin/netpath-probe"

new_ns "$PREFIX-a"
new_ns "$PREFIX-b"
add_veth "$PREFIX-a" "$PREFIX-b"
in_a() { ip netns exec "$PREFIX-a" "$@"; }

# The changes both traced programs see: each waits long enough for the program to have handled
# the one before (no event to await from outside a traced program; a missed change only leaves a
# function out of the order, never a wrong binary).
changes() {
    ip netns exec "$PREFIX-b" "$WORK/toggle" npb1 4 150 >/dev/null      # carrier
    in_a "$WORK/toggle" npb0 2 300 >/dev/null                             # administrative
    in_a ip addr add 198.51.100.7/24 dev npb0; sleep 0.3
    in_a ip route add 203.0.113.0/24 via 198.51.100.1; sleep 0.3
    in_a ip route del 203.0.113.0/24; sleep 0.3
    in_a ip addr del 198.51.100.7/24 dev npb0; sleep 0.3
}

mkdir -m 0755 "$WORK/hooks"
chmod 0755 "$WORK"
printf '#!/bin/sh\n: > %s/hook-ran\n' "$WORK" > "$WORK/hooks/50-order"
chmod 0755 "$WORK/hooks/50-order"
cat > "$WORK/netpath.toml" <<EOF
[agent]
hooks_dir = "$WORK/hooks"
settle = "0s"
metrics = ""

[[rule]]
name = "uplink"
on = ["carrier-up", "carrier-down", "up", "down", "address-added", "address-removed"]
interface = "npb0"

[connectivity]
uri = "http://192.0.2.2:8080/check"
timeout = "2s"
EOF
# The endpoint the agent probes, in the peer namespace: a portal until the toggles begin.
echo portal > "$WORK/mode"
ip netns exec "$PREFIX-b" python3 bench/connectivity.py --serve "$WORK/mode" >/dev/null 2>&1 &
SERVER=$!

# Each traced program runs until firstcalls passes it a SIGTERM; 120 s at most. Started as plain
# commands, not through in_a: `ip netns exec` execs firstcalls, so $! is firstcalls itself.
finish() { # TRACER LOG
    kill -TERM "$1"
    local status=0
    wait "$1" || status=$?
    [ "$status" = 0 ] || { echo "order.sh: the traced program failed (status $status):" >&2; tail -20 "$2" >&2; exit 1; }
}

ip netns exec "$PREFIX-a" "$WORK/firstcalls" "$WORK/netpathd.symbols" 120 "$WORK/netpathd.order" \
    "$WORK/bin/netpathd" --config "$WORK/netpath.toml" --control-socket "$WORK/control.sock" >"$WORK/netpathd.log" 2>&1 &
TRACER=$!
for _ in $(seq 300); do [ -S "$WORK/control.sock" ] && break; sleep 0.1; done
[ -S "$WORK/control.sock" ] || { echo "order.sh: netpathd did not start:" >&2; cat "$WORK/netpathd.log" >&2; exit 1; }
# The portal's verdict first (on a busy machine the first probe may take seconds), then full
# internet for the probes the changes bring.
for _ in $(seq 300); do grep -q 'connectivity.*portal' "$WORK/netpathd.log" && break; sleep 0.1; done
echo full > "$WORK/mode"
changes
in_a "$NETPATHCTL" status --socket "$WORK/control.sock" >/dev/null
# The helper's tracer first (netpathd stops its helper with SIGKILL, which would leave no list):
# its SIGTERM ends the helper and writes the list.
pkill -TERM -f "^$WORK/firstcalls $WORK/probe.symbols" || { echo "order.sh: no probe helper ran" >&2; exit 1; }
for _ in $(seq 100); do [ -s "$WORK/probe.order" ] && break; sleep 0.1; done
finish "$TRACER" "$WORK/netpathd.log"
grep -q 'connectivity.*portal' "$WORK/netpathd.log" && grep -q 'connectivity.*full' "$WORK/netpathd.log" ||
    { echo "order.sh: the agent did not probe a portal and then full internet:" >&2; cat "$WORK/netpathd.log" >&2; exit 1; }
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
[ -e "$WORK/hook-ran" ] || { echo "order.sh: the hook never ran:" >&2; cat "$WORK/netpathd.log" >&2; exit 1; }

ip netns exec "$PREFIX-a" "$WORK/firstcalls" "$WORK/netpathctl.symbols" 120 "$WORK/monitor.order" \
    "$NETPATHCTL" monitor --local >/dev/null 2>"$WORK/monitor.log" &
TRACER=$!
sleep 2
changes
finish "$TRACER" "$WORK/monitor.log"
in_a "$WORK/firstcalls" "$WORK/netpathctl.symbols" 20 "$WORK/status.order" "$NETPATHCTL" status --local >/dev/null
"$WORK/firstcalls" "$WORK/netpathctl.symbols" 20 "$WORK/check.order" \
    "$NETPATHCTL" check-config "$WORK/netpath.toml" >/dev/null

# The change's functions: under callgrind, in a namespace of its own, with bench/hooks.py's rule.
FUNCTIONS="$WORK/change.functions" bench/pathcost.sh "$NETPATHD" 10 >"$WORK/pathcost.log" 2>&1 ||
    { echo "order.sh: bench/pathcost.sh failed:" >&2; tail -20 "$WORK/pathcost.log" >&2; exit 1; }
# The linker places sections. Our modules and our dependencies' are compiled with
# -function-sections, a section per function; the toolchain's static libraries were not: each of
# their objects is one section (the standard library's Swift.o is 1.5 MB of code), placed where
# its first listed function is. Listed among ours, one such object would split the change's
# block, so theirs come after ours. Ours: the functions this build's own objects define.
find -L "$BUILD_DIR" -path '*.build/*.o' -type f -print0 | xargs -0 nm --defined-only 2>/dev/null |
    awk 'NF == 3 && $2 ~ /^[tTwW]$/ { print $3 }' > "$WORK/own.functions"
[ -s "$WORK/own.functions" ] || { echo "order.sh: no objects of this build under $BUILD_DIR" >&2; exit 1; }
# Ours in the order of their first call in 1., then ours 1. did not list; then theirs likewise.
: > "$WORK/change.order"
for own in 1 0; do
    awk -v own="$own" 'FILENAME == ARGV[1] { mine[$0] = 1; next }
         FILENAME == ARGV[2] { change[$0] = 1; next }
         ($0 in change) && (($0 in mine) == own) && !seen[$0]++' \
        "$WORK/own.functions" "$WORK/change.functions" "$WORK/netpathd.order" >> "$WORK/change.order"
    awk -v own="$own" 'FILENAME == ARGV[1] { mine[$0] = 1; next }
         FILENAME == ARGV[2] { listed[$0] = 1; next }
         !($0 in listed) && (($0 in mine) == own)' \
        "$WORK/own.functions" "$WORK/netpathd.order" "$WORK/change.functions" >> "$WORK/change.order"
done

for list in change netpathd monitor status check probe; do
    called=$(wc -l < "$WORK/$list.order")
    echo "order.sh: $list called $called functions" >&2
    # Far fewer than a start-up calls: the run went wrong, and the order would be poorer. (The
    # probe helper, a small program, calls ~500.)
    minimum=1000
    [ "$list" != probe ] && [ "$list" != change ] || minimum=300
    [ "$called" -ge "$minimum" ] || { echo "order.sh: too few for $list; build-support/netpath.order is left as it was" >&2; exit 1; }
done
{
    echo "# build-support/netpath.order: generated by build-support/order.sh (make order); the Makefile says why."
    awk '!seen[$0]++' "$WORK/change.order" "$WORK/netpathd.order" "$WORK/monitor.order" "$WORK/status.order" "$WORK/check.order" \
        "$WORK/probe.order"
} > "$WORK/netpath.order"
mv "$WORK/netpath.order" build-support/netpath.order
echo "order.sh: build-support/netpath.order holds $(($(wc -l < build-support/netpath.order) - 1)); install-build relinks in that order" >&2
