# SPDX-License-Identifier: Apache-2.0
# Namespace helpers for bench/run.sh and bench/profile.sh (sourced; needs PREFIX set).
# Every namespace created through new_ns is deleted on exit, whatever happens.

NAMESPACES=()

delete_ns() {
    local ns=$1 pid
    # Only processes inside our own uniquely named namespace: the listeners this script started.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
}

# A run killed by SIGKILL (no trap runs) leaves its namespaces: remove those of runs whose
# bench/run.sh (the PID in the name, npbench-PID-…) is gone.
for stale in $(ip netns list 2>/dev/null | awk '/^npbench-[0-9]+-/ {print $1}'); do
    owner=${stale#npbench-}
    owner=${owner%%-*}
    if ! kill -0 "$owner" 2>/dev/null; then
        echo "removing stale bench namespace $stale" >&2
        delete_ns "$stale"
    fi
done

CHILD=

cleanup() {
    local ns
    # The harness in progress, if a signal cut it short (it is not inside a namespace).
    if [ -n "$CHILD" ]; then kill -TERM "$CHILD" 2>/dev/null || true; fi
    for ns in "${NAMESPACES[@]}"; do delete_ns "$ns"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# Runs a command in the background and waits for it: bash runs a trap only once the foreground
# command ends, but interrupts `wait` at once, so a signal still cleans up promptly.
run() {
    "$@" &
    CHILD=$!
    local status=0
    wait "$CHILD" || status=$?
    CHILD=
    return "$status"
}

new_ns() {
    NAMESPACES+=("$1")
    ip netns add "$1"
    ip -n "$1" link set lo up
}

# The veth ends get distinct ifindexes on purpose. In two fresh namespaces both ends would be
# ifindex 2, and the kernel's linkwatch treats a device whose ifindex equals its iflink (the
# peer's index) as non-urgent: its carrier changes are then reported up to one second late and
# coalesced. Real uplinks never hit this; the benchmark must not either.
add_veth() { # NS PEER_NS
    ip -n "$1" link add npb0 index 11 type veth peer name npb1 index 21 netns "$2"
    # No IPv6 link-local addresses: their DAD completes ~1.3 s after each up and would print
    # lines unrelated to the toggle being measured. Static addresses below cover IPv6.
    ip -n "$1" link set npb0 addrgenmode none
    ip -n "$2" link set npb1 addrgenmode none
    ip -n "$1" addr add 192.0.2.1/24 dev npb0
    ip -n "$1" addr add 2001:db8::1/64 dev npb0 nodad
    ip -n "$2" addr add 192.0.2.2/24 dev npb1
    ip -n "$1" link set npb0 up
    ip -n "$2" link set npb1 up
    ip -n "$1" route add default via 192.0.2.2 dev npb0 metric 100
}
