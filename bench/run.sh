#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench: issue 2's measurements (netpathctl monitor side by side with `ip monitor`) and
# issue 4's (hook start: netpathd beside netplug and an `ip monitor | sh` loop).
#
#   1. latency of a link change to the listener's first output line (admin and carrier toggles);
#   2. hook start: a link change to the first line a hook writes, for an `ip monitor | sh` loop,
#      netplug and netpathd, all running, their links changed in rotation, with the same hook and
#      the same toggles (bench/hooks.py);
#   3. the same hook start split by kernel tracepoints (bench/hooktrace.py, needs perf): change →
#      runner reads the message → forks the hook → hook exec'd → hook's first line;
#   4. idle RSS;
#   5. a 1,000,000-route `ip -batch` storm: CPU, peak RSS, overruns, and when the state caught up;
#   5b. netpathd's start-up with 1,000,000 routes already in the table: time to READY=1, idle RSS
#      (bench/startup.py; issue 14);
#   6. the Network module (issue 17): link change -> NWPathMonitor's pathUpdateHandler beside
#      `ip monitor`, and the idle RSS a monitor adds to a program (bench/library.py).
#   7. connectivity (issue 21): a portal turning into full internet, a link change, what probing
#      costs netpathd at idle (bench/connectivity.py), and the probe helper per probe
#      (bench/probe_helper.py).
#   8. wait-online (issue 40): the change that makes the path online → `netpathctl wait-online`'s
#      answer, beside `ip monitor` seeing the same change (bench/waitonline.py).
#   9. a container host (issue 42): 2,000 Docker-style veth pairs created and deleted, by one
#      `ip -batch` and then one by one at CONTAINER_RATE per second, beside netpathd on its default
#      configuration: its CPU, peak RSS, hooks run, catch-up time, and a real uplink's carrier
#      change during the burst to its hook (bench/containers.py). BENCH_PHASES=containers runs this
#      phase alone (BENCHMARKS.md left alone) and prints its table.
#
# Prints a markdown summary on stdout and rewrites the generated part of BENCHMARKS.md.
# Needs root (network namespaces), ip, cc and python3; installs Debian's netplug and linux-perf
# (perf) if missing; without perf it skips step 3 and says so.
# Every namespace it creates has a unique name and is deleted on exit, whatever happens.
#
# Environment: BUILD_DIR (default .build/bench/release: what `make install-build` builds and
# `make install` installs, with netpathctl's --bench-snapshots compiled in; `make bench` builds it first), TOGGLES (per kind, default 400),
# GAP_MS (default 30), ROUTES (the storm's routes, default 1000000), STARTUP_ROUTES (routes in the
# table at start-up, default ROUTES), HOOK_TOGGLES (per kind and hook runner, default
# 200, split over HOOK_ROUNDS rounds, default 4: even, for the rotation's order to be reversed
# in half of them), HOOK_GAP_MS (default 40), HOOK_TRACE_TOGGLES (traced carrier toggles per runner,
# default 100), HOOK_BATCH_ROUTES / HOOK_BATCHES / HOOK_OTHER_BATCHES (the first change right after
# an `ip -batch` of that many routes, that many times for netplug and the link rule, and for the
# others; default 100000 / 100 / 20: a nearest-rank p99 is the slowest of fewer than 100, the
# second slowest of 100 to 199; 0 routes to skip), CONNECTIVITY_ROUNDS /
# CONNECTIVITY_AFTER / CONNECTIVITY_IDLE (bench/connectivity.py: rounds, seconds behind the portal
# before it turns into full internet, idle seconds; default 3 / 20 / 20), PROBE_COUNT (probes of
# each kind for bench/probe_helper.py, default 200), WAIT_ONLINE_ROUNDS (bench/waitonline.py, default 50),
# CONTAINER_PAIRS / CONTAINER_RATE (bench/containers.py:
# veth pairs, and pairs per second when made one by one; default 2000 / 50), UPDATE=0 to leave BENCHMARKS.md alone, QUIET_MAX_BUSY / QUIET_TIMEOUT (default 25 % / 600 s): before the latency, hook and storm
# phases, wait up to QUIET_TIMEOUT for the shared machine to be under QUIET_MAX_BUSY % busy.
#
# Measuring a change on and off in one run: BENCH_PHASES (default all) runs only the phases it
# names, of latency library hooks trace idle storm startup connectivity waitonline containers (comma-
# or space-separated);
# a partial run prints its part of the report and leaves BENCHMARKS.md alone. BENCH_COMPARE_BUILD is
# another build's directory holding its netpathd, built as `make bench` builds (`make bench-build`
# in a worktree of the other commit: its .build/bench/release): its link-rule runner
# (netpathd-link-b) joins the hook phase's main rotation beside this build's, both paired against
# netplug, and the traced phase; BENCH_COMPARE_LABEL names it in the report (default: the path).
# E.g. `make bench BENCH_PHASES=hooks,trace BENCH_COMPARE_BUILD=../other/.build/bench/release`.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-.build/bench/release}
NETPATHCTL=$(realpath "$BUILD_DIR/netpathctl")
TOGGLES=${TOGGLES:-400}
GAP_MS=${GAP_MS:-30}
ROUTES=${ROUTES:-1000000}
STARTUP_ROUTES=${STARTUP_ROUTES:-$ROUTES}
UPDATE=${UPDATE:-1}
QUIET_TIMEOUT=${QUIET_TIMEOUT:-600}
QUIET_MAX_BUSY=${QUIET_MAX_BUSY:-25}
HOOK_TOGGLES=${HOOK_TOGGLES:-200}
HOOK_ROUNDS=${HOOK_ROUNDS:-4}
HOOK_GAP_MS=${HOOK_GAP_MS:-40}
HOOK_TRACE_TOGGLES=${HOOK_TRACE_TOGGLES:-100}
HOOK_BATCH_ROUTES=${HOOK_BATCH_ROUTES:-100000}
HOOK_BATCHES=${HOOK_BATCHES:-100}
HOOK_OTHER_BATCHES=${HOOK_OTHER_BATCHES:-20}
CONNECTIVITY_ROUNDS=${CONNECTIVITY_ROUNDS:-3}
CONNECTIVITY_AFTER=${CONNECTIVITY_AFTER:-20}
CONNECTIVITY_IDLE=${CONNECTIVITY_IDLE:-20}
PROBE_COUNT=${PROBE_COUNT:-200}
WAIT_ONLINE_ROUNDS=${WAIT_ONLINE_ROUNDS:-50}
CONTAINER_PAIRS=${CONTAINER_PAIRS:-2000}
CONTAINER_RATE=${CONTAINER_RATE:-50}
NETPATHD=$(realpath "$BUILD_DIR/netpathd")
NETWORK_EXAMPLE=$(realpath "$BUILD_DIR/network-monitor-example")
BENCH_PHASES=${BENCH_PHASES:-all}
BENCH_COMPARE_BUILD=${BENCH_COMPARE_BUILD:-}
BENCH_COMPARE_LABEL=${BENCH_COMPARE_LABEL:-$BENCH_COMPARE_BUILD}
NETPATHD_B=
if [ -n "$BENCH_COMPARE_BUILD" ]; then
    NETPATHD_B=$(realpath "$BENCH_COMPARE_BUILD/netpathd")
    [ -x "$NETPATHD_B" ] || { echo "bench/run.sh: no $NETPATHD_B (BENCH_COMPARE_BUILD)" >&2; exit 1; }
fi
# phase NAME: whether BENCH_PHASES asks for it.
phase() { [ "$BENCH_PHASES" = all ] || [[ " ${BENCH_PHASES//,/ } " == *" $1 "* ]]; }
for name in ${BENCH_PHASES//,/ }; do
    case "$name" in
        all | latency | library | hooks | trace | idle | storm | startup | connectivity | waitonline | containers) ;;
        *) echo "bench/run.sh: unknown phase $name in BENCH_PHASES" >&2; exit 1 ;;
    esac
done
[ "$BENCH_PHASES" = all ] || UPDATE=0  # a partial report must not replace the whole one

if [ "$(id -u)" -ne 0 ]; then echo "bench/run.sh: needs root (network namespaces)" >&2; exit 1; fi
for tool in ip cc python3; do
    command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool is missing" >&2; exit 1; }
done
for bin in "$NETPATHCTL" "$NETPATHD" "$NETWORK_EXAMPLE"; do
    [ -x "$bin" ] || { echo "bench/run.sh: no $bin (make bench builds it, or set BUILD_DIR)" >&2; exit 1; }
done

OUT=bench/out
RESULTS=$OUT/results-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS"
cc -O2 -Wall -Wextra -o "$OUT/toggle" bench/toggle.c
cc -O2 -Wall -Wextra -o "$OUT/hookstamp" bench/hookstamp.c
export PYTHONDONTWRITEBYTECODE=1
# When and on what tree: recorded now, so the report still says so if it is re-rendered later.
python3 - "$RESULTS/run.json" "$BUILD_DIR" "$BENCH_PHASES" "$NETPATHD_B" "$BENCH_COMPARE_LABEL" <<'PY'
import datetime, json, subprocess, sys
git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
json.dump({"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "commit": git("rev-parse", "--short", "HEAD"),
           "dirty": git("status", "--porcelain", "--", "Sources", "Package.swift"),
           "build_dir": sys.argv[2], "phases": sys.argv[3],
           "compare": {"netpathd": sys.argv[4], "label": sys.argv[5]} if sys.argv[4] else None},
          open(sys.argv[1], "w"))
PY

PREFIX="npbench-$$-$RANDOM"
# shellcheck source=bench/namespaces.sh
. bench/namespaces.sh

quiet() { run python3 bench/quiet.py --max-busy "$QUIET_MAX_BUSY" --timeout "$QUIET_TIMEOUT" --what "$1"; }

# The container phase (issue 42): netpathd's cost under Docker-style veth churn (bench/containers.py).
containers_phase() {
    echo "== containers: $CONTAINER_PAIRS veth pairs by one ip -batch, then one by one at $CONTAINER_RATE/s" >&2
    quiet "the container phase"
    new_ns "$PREFIX-ct"
    new_ns "$PREFIX-ct-p"
    new_ns "$PREFIX-ct-c"
    add_veth "$PREFIX-ct" "$PREFIX-ct-p"
    run python3 bench/containers.py --ns "$PREFIX-ct" --peer-ns "$PREFIX-ct-p" --ctr-ns "$PREFIX-ct-c" \
        --netpathd "$NETPATHD" --netpathctl "$NETPATHCTL" --toggle "$(realpath "$OUT/toggle")" \
        --stamp "$(realpath "$OUT/hookstamp")" --work "$RESULTS/containers" --pairs "$CONTAINER_PAIRS" \
        --rate "$CONTAINER_RATE" --out "$RESULTS/containers.json"
    delete_ns "$PREFIX-ct"
    delete_ns "$PREFIX-ct-p"
    delete_ns "$PREFIX-ct-c"
}

# netplug: issue 4's reference hook runner (peers.md), measured beside netpathd.
if ! command -v netplugd >/dev/null && [ ! -x /usr/sbin/netplugd ]; then
    echo "== installing netplug (apt-get install -y netplug)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y netplug >&2 || {
        apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y netplug >&2; }
fi
NETPLUGD=$(command -v netplugd || echo /usr/sbin/netplugd)

if phase latency; then
    echo "== latency: $TOGGLES admin + $TOGGLES carrier toggles, ${GAP_MS} ms apart" >&2
    quiet "the latency phase"
    new_ns "$PREFIX-mon"
    new_ns "$PREFIX-peer"
    add_veth "$PREFIX-mon" "$PREFIX-peer"
    run python3 bench/latency.py --ns "$PREFIX-mon" --peer-ns "$PREFIX-peer" --link npb0 --peer-link npb1 \
        --netpathctl "$NETPATHCTL" --toggle "$OUT/toggle" --count "$TOGGLES" --gap-ms "$GAP_MS" \
        --out "$RESULTS/latency.json"
    delete_ns "$PREFIX-mon"
    delete_ns "$PREFIX-peer"
fi

if phase library; then
    echo "== library: NWPathMonitor (the Network module), $TOGGLES admin + $TOGGLES carrier toggles; a monitor's RSS" >&2
    quiet "the library phase"
    new_ns "$PREFIX-lib"
    new_ns "$PREFIX-lib-p"
    add_veth "$PREFIX-lib" "$PREFIX-lib-p"
    run python3 bench/library.py --ns "$PREFIX-lib" --peer-ns "$PREFIX-lib-p" --link npb0 --peer-link npb1 \
        --example "$NETWORK_EXAMPLE" --toggle "$OUT/toggle" --count "$TOGGLES" --gap-ms "$GAP_MS" \
        --out "$RESULTS/library.json"
    delete_ns "$PREFIX-lib"
    delete_ns "$PREFIX-lib-p"
fi

# The hook runners. Another build's link rule (BENCH_COMPARE_BUILD) goes just before netplug, as
# this build's goes just after it: each 40 ms from netplug's change, before it in half of the
# rounds and after it in the other half.
HOOK_RUNNERS="ip ${NETPATHD_B:+netpathd-link-b }netplug netpathd netpathd-link"
# hook_runner SCRIPT NAMESPACE RUNNER ARGS...: bench/SCRIPT for one hook runner on a fresh veth
# pair (NAMESPACE and NAMESPACE-p), deleted afterwards whatever the script did.
new_pair() { new_ns "$1" && new_ns "$1-p" && add_veth "$1" "$1-p"; }  # NS: NS and NS-p, a veth between
delete_pair() { delete_ns "$1" && delete_ns "$1-p"; }
hook_runner() {
    local script="$1" ns="$2" runner="$3" status=0
    shift 3
    new_pair "$ns"
    run python3 "bench/$script" --listener "$runner" --ns "$ns" --peer-ns "$ns-p" --link npb0 --peer-link npb1 \
        --netpathd "$NETPATHD" ${NETPATHD_B:+--netpathd-b "$NETPATHD_B"} --netplugd "$NETPLUGD" \
        --toggle "$OUT/toggle" --stamp "$(realpath "$OUT/hookstamp")" --gap-ms "$HOOK_GAP_MS" "$@" || status=$?
    delete_pair "$ns"
    return "$status"
}

if phase hooks; then
    ROUND_TOGGLES=$(((HOOK_TOGGLES + HOOK_ROUNDS - 1) / HOOK_ROUNDS))
    ROUND_BATCHES=$(((HOOK_BATCHES + HOOK_ROUNDS - 1) / HOOK_ROUNDS))
    ROUND_OTHER_BATCHES=$(((HOOK_OTHER_BATCHES + HOOK_ROUNDS - 1) / HOOK_ROUNDS))
    echo "== hook start: $HOOK_ROUNDS rounds of $ROUND_TOGGLES carrier + $ROUND_TOGGLES admin toggles, ${HOOK_GAP_MS} ms apart, per hook runner" >&2
    quiet "the hook phase"
    # All runners at once, each on fresh namespaces of its own (same addresses and routes for all),
    # the changes going to them in rotation (bench/hooks.py): a drift of the machine's speed falls on
    # every runner alike, change by change. In rounds, each on fresh namespaces again (bench/hookrounds.py
    # pools the rounds and pairs each round's medians).
    # The rotation's order is reversed every other round, so that neither runner of a pair is always
    # the one changed first.
    HOOK_RUNNERS_REVERSED=$(printf '%s\n' $HOOK_RUNNERS | tac | tr '\n' ' ')
    for round in $(seq 1 "$HOOK_ROUNDS"); do
        runner_args=()
        order=$HOOK_RUNNERS
        [ $((round % 2)) -eq 0 ] && order=$HOOK_RUNNERS_REVERSED
        for runner in $order; do
            new_pair "$PREFIX-hk-$runner"
            runner_args+=(--listener "$runner" --ns "$PREFIX-hk-$runner" --peer-ns "$PREFIX-hk-$runner-p")
        done
        run python3 bench/hooks.py "${runner_args[@]}" --link npb0 --peer-link npb1 \
            --netpathd "$NETPATHD" ${NETPATHD_B:+--netpathd-b "$NETPATHD_B"} --netplugd "$NETPLUGD" \
            --toggle "$OUT/toggle" --stamp "$(realpath "$OUT/hookstamp")" \
            --gap-ms "$HOOK_GAP_MS" --work "$RESULTS/hooks-{runner}-r$round" --count "$ROUND_TOGGLES" \
            --out "$RESULTS/hooks-{runner}-r$round.json" --batch-routes "$HOOK_BATCH_ROUTES" --batches "$ROUND_BATCHES" \
            --other-batches "$ROUND_OTHER_BATCHES"
        for runner in $HOOK_RUNNERS; do delete_pair "$PREFIX-hk-$runner"; done
    done
    run python3 bench/hookrounds.py "$RESULTS" "$HOOK_ROUNDS" $HOOK_RUNNERS
fi

# The same runs split by kernel tracepoints (bench/hooktrace.py): where each runner's time goes
# between the change and the hook's first line. Needs perf (Debian: linux-perf).
if phase trace; then
    if ! command -v perf >/dev/null; then
        echo "== installing perf (apt-get install -y linux-perf)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf >&2 || {
            apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf >&2; } || true
    fi
    if command -v perf >/dev/null; then
        echo "== hook start, traced: $HOOK_TRACE_TOGGLES carrier toggles per runner (perf tracepoints)" >&2
        quiet "the traced hook phase"
        for runner in netplug netpathd-link ${NETPATHD_B:+netpathd-link-b}; do
            hook_runner hooktrace.py "$PREFIX-ht-$runner" "$runner" --work "$RESULTS/hooktrace-$runner" \
                --count "$HOOK_TRACE_TOGGLES" --out "$RESULTS/hooktrace-$runner.json" ||
                echo "== hook start, traced: $runner failed (perf cannot trace here?); the table is left out" >&2
        done
    else
        echo "== hook start, traced: skipped (no perf)" >&2
    fi
fi

if phase idle; then
    echo "== idle RSS" >&2
    new_ns "$PREFIX-idle"
    add_veth "$PREFIX-idle" "$PREFIX-idle"
    run python3 bench/idle.py --ns "$PREFIX-idle" --netpathctl "$NETPATHCTL" --out "$RESULTS/idle.json"
    delete_ns "$PREFIX-idle"
fi

if phase storm; then
    for listener in netpathctl ip; do
        echo "== storm: $ROUTES routes, listener $listener" >&2
        quiet "the storm"
        ns="$PREFIX-storm-$listener"
        new_ns "$ns"
        add_veth "$ns" "$ns"
        run python3 bench/storm.py --ns "$ns" --listener "$listener" --netpathctl "$NETPATHCTL" \
            --routes "$ROUTES" --out "$RESULTS/storm-$listener.json"
        delete_ns "$ns"
    done
fi

if phase startup; then
    echo "== start-up: netpathd with $STARTUP_ROUTES routes already in the table" >&2
    quiet "the start-up phase"
    new_ns "$PREFIX-start"
    add_veth "$PREFIX-start" "$PREFIX-start"
    new_ns "$PREFIX-start0"
    add_veth "$PREFIX-start0" "$PREFIX-start0"
    run python3 bench/startup.py --ns "$PREFIX-start" --empty-ns "$PREFIX-start0" --netpathd "$NETPATHD" \
        --routes "$STARTUP_ROUTES" --work "$RESULTS/startup" --out "$RESULTS/startup.json"
    delete_ns "$PREFIX-start"
    delete_ns "$PREFIX-start0"
fi

if phase connectivity; then
    echo "== connectivity: a portal turning into full internet, a link change, and the idle cost (issue 21)" >&2
    quiet "the connectivity phase"
    new_ns "$PREFIX-cn"
    new_ns "$PREFIX-cn-p"
    add_veth "$PREFIX-cn" "$PREFIX-cn-p"
    run python3 bench/connectivity.py --ns "$PREFIX-cn" --peer-ns "$PREFIX-cn-p" --netpathd "$NETPATHD" \
        --stamp "$(realpath "$OUT/hookstamp")" --work "$RESULTS/connectivity" --rounds "$CONNECTIVITY_ROUNDS" \
        --after "$CONNECTIVITY_AFTER" --idle "$CONNECTIVITY_IDLE" --out "$RESULTS/connectivity.json"
    delete_ns "$PREFIX-cn"
    delete_ns "$PREFIX-cn-p"
    echo "== the probe helper's RSS and CPU per probe (issue 21)" >&2
    PROBES=$PROBE_COUNT run python3 bench/probe_helper.py "$BUILD_DIR" >"$RESULTS/probe_helper.md"
fi
if phase waitonline; then
    echo "== wait-online: the change that makes the path online → wait-online's answer, beside ip monitor (issue 40)" >&2
    quiet "the wait-online phase"
    new_ns "$PREFIX-wo"
    new_ns "$PREFIX-wo-p"
    add_veth "$PREFIX-wo" "$PREFIX-wo-p"
    run python3 bench/waitonline.py --ns "$PREFIX-wo" --netpathd "$NETPATHD" --netpathctl "$NETPATHCTL" \
        --work "$RESULTS/waitonline" --rounds "$WAIT_ONLINE_ROUNDS" --out "$RESULTS/waitonline.json"
    delete_ns "$PREFIX-wo"
    delete_ns "$PREFIX-wo-p"
fi

if phase containers; then containers_phase; fi

REPORT_ARGS=(--results "$RESULTS" --netpathctl "$NETPATHCTL")
[ "$UPDATE" = 1 ] && REPORT_ARGS+=(--update BENCHMARKS.md)
python3 bench/report.py "${REPORT_ARGS[@]}"
