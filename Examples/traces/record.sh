#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Re-records the example traces in throwaway network namespaces. Three veth links stand in for
# a wired port (eth0), a Wi-Fi card (wlan0) and an LTE modem (wwan0); uplinks.toml types them.
# Their peers live in a second namespace, where "unplugging" a link takes its carrier away.
#
#   usage: Examples/traces/record.sh [path/to/netpathctl]     (as root)
set -euo pipefail
cd "$(dirname "$0")"
NETPATHCTL=${1:-../../.build/debug/netpathctl}
HOST=np-trace-host-$$ PEER=np-trace-peer-$$
MON=""
cleanup() {
    [ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null || true
    ip netns del "$HOST" 2>/dev/null || true
    ip netns del "$PEER" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$HOST"; ip netns add "$PEER"
ip -n "$HOST" link set lo up
n=0
for dev in eth0:100 wlan0:600 wwan0:700; do
    name=${dev%%:*} metric=${dev##*:} n=$((n + 1))
    ip -n "$HOST" link add "$name" type veth peer name "${name}p" netns "$PEER"
    ip -n "$HOST" link set "$name" up
    ip -n "$PEER" link set "${name}p" up
    ip -n "$HOST" addr add "10.$n.0.2/24" dev "$name"
    ip -n "$HOST" route add default via "10.$n.0.1" dev "$name" metric "$metric"
done

# Starts the recorder and returns once it has its initial state (its ready line on stderr).
record() {
    local out=$1 err
    err=$(mktemp)
    ip netns exec "$HOST" "$NETPATHCTL" monitor --local --config uplinks.toml --record "$out" >/dev/null 2>"$err" &
    MON=$!
    for _ in $(seq 100); do grep -q '^monitoring ' "$err" && break; sleep 0.1; done
    grep -q '^monitoring ' "$err" || { echo "recorder did not start: $(cat "$err")" >&2; exit 1; }
    rm -f "$err"
}
stop() { kill "$MON"; wait "$MON" 2>/dev/null || true; MON=""; }
# Waits until the trace has at least $2 records (header included), so each step is recorded.
lines() { for _ in $(seq 100); do [ "$(wc -l <"$1")" -ge "$2" ] && return; sleep 0.05; done; }

# 1. Wired unplugged while Wi-Fi and LTE are up.
record wired-unplugged.jsonl
ip -n "$PEER" link set eth0p down
lines wired-unplugged.jsonl 3
sleep 0.5
stop

# 2. A flapping wired link: three down/up cycles, then an MTU change once it is stable. The
#    kernel's linkwatch reports carrier changes at most about once a second per device, so
#    faster flaps would be invisible to every listener (ip monitor included): 1.2 s apart.
ip -n "$PEER" link set eth0p up
sleep 0.5
record flapping-link.jsonl
for i in 1 2 3; do
    ip -n "$PEER" link set eth0p down; sleep 1.2
    ip -n "$PEER" link set eth0p up; sleep 1.2
done
sleep 1
ip -n "$HOST" link set eth0 mtu 1400
sleep 0.5
stop
wc -l wired-unplugged.jsonl flapping-link.jsonl
