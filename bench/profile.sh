#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/profile.sh: where `netpathctl monitor --local --json` spends its CPU per link change.
#
# Not part of `make bench`: run it by hand (root, perf) when the latency target is missed.
# The same namespaces and toggles as bench/run.sh's latency step, with perf sampling the
# listener (call graphs); prints the CPU used per toggle and the inclusive share of the
# functions that take more than PERCENT of it, demangled.
#
# Environment: BUILD_DIR (default .build/release), TOGGLES (per kind, default 200),
# PERCENT (default 2).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-.build/release}
NETPATHCTL=$(realpath "$BUILD_DIR/netpathctl")
TOGGLES=${TOGGLES:-200}
PERCENT=${PERCENT:-2}
if [ "$(id -u)" -ne 0 ]; then echo "bench/profile.sh: needs root" >&2; exit 1; fi
command -v perf >/dev/null || { echo "bench/profile.sh: perf is missing (apt-get install linux-perf)" >&2; exit 1; }

OUT=bench/out
mkdir -p "$OUT"
cc -O2 -Wall -Wextra -o "$OUT/toggle" bench/toggle.c
export PYTHONDONTWRITEBYTECODE=1

PREFIX="npprof-$$-$RANDOM"
# shellcheck source=bench/namespaces.sh
. bench/namespaces.sh
new_ns "$PREFIX-mon"
new_ns "$PREFIX-peer"
add_veth "$PREFIX-mon" "$PREFIX-peer"

# `ip netns exec` execs the listener: $! is its PID.
ip netns exec "$PREFIX-mon" "$NETPATHCTL" monitor --local --json >/dev/null 2>&1 &
LISTENER=$!
sleep 1.5
perf record -q -F 10000 -g -o "$OUT/perf.data" -p "$LISTENER" 2>/dev/null &
PERF=$!
sleep 0.5
ip netns exec "$PREFIX-mon" "$OUT/toggle" npb0 "$TOGGLES" 20 >/dev/null
ip netns exec "$PREFIX-peer" "$OUT/toggle" npb1 "$TOGGLES" 20 >/dev/null
sleep 0.2
kill -INT "$PERF"
wait "$PERF" || true
kill "$LISTENER"
wait "$LISTENER" 2>/dev/null || true

# cpu-clock samples are weighted in ns: the event count is the CPU time sampled.
total_ns=$(perf report -i "$OUT/perf.data" --stdio 2>/dev/null | sed -n 's/^# Event count (approx.): //p' | head -1)
toggles=$((2 * TOGGLES))
echo "netpathctl monitor --local --json: $((total_ns / 1000000)) ms CPU over $toggles toggles," \
    "$((total_ns / 1000 / toggles)) µs per toggle (all threads)"
echo
echo "inclusive share of that CPU (functions above ${PERCENT}%):"
perf report -i "$OUT/perf.data" --stdio --children --sort sym -g none --percent-limit "$PERCENT" 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | swift demangle --simplified | cut -c1-180
