#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's own work between a link change and its hook's spawn, counted in instructions.
#
# Timed figures of that path (bench/hooktrace.py's "read -> fork") move by ±30 µs between runs of
# the same binary on these shared, idle-between-changes machines, more than most changes to the
# path; callgrind counts instructions, which are the same for the same binary and inputs. This
# runs netpathd under callgrind in a namespace of its own with bench/hooks.py's one-rule
# configuration (a link's carrier events run one hook), toggles the veth peer's carrier, and
# sums on the engine's thread what runs from `NetlinkEngine.publish` (the change's messages are
# read: the snapshot is handed on) to `np_spawn` (the hook's clone). It prints the median
# per change, and the functions of a typical change with their inclusive counts.
#
# It also prints the code's footprint: the distinct 64-byte lines of code a change executes.
# With changes 40 ms apart, the caches and TLBs have been refilled by other work before each
# change, so every one of those lines is fetched again; the path's time follows its footprint
# (and its data's) more than its instruction count (BENCHMARKS.md).
#
#   bench/pathcost.sh [NETPATHD] [TOGGLES]     # default .build/install/release/netpathd, 20
#
# With FUNCTIONS set to a file, it also writes there the names (the binary's symbols) of the
# functions any change ran, one per line: build-support/order.sh lays them out first.
#
# Needs root, ip, valgrind and objcopy (Debian: valgrind, binutils). valgrind 3.19 cannot read
# the DWARF 5 that Swift 6.3 writes, so a copy of the binary without debug information is run
# (its symbol table stays: the functions are still named).
set -euo pipefail
cd "$(dirname "$0")/.."

NETPATHD=$(realpath "${1:-.build/install/release/netpathd}")
TOGGLES=${2:-20}
[ "$(id -u)" -eq 0 ] || { echo "bench/pathcost.sh: needs root (network namespaces)" >&2; exit 1; }
[ -x "$NETPATHD" ] || { echo "bench/pathcost.sh: no $NETPATHD (make install-build first)" >&2; exit 1; }
for tool in valgrind objcopy; do
    command -v "$tool" >/dev/null || {
        echo "== installing $tool" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind binutils >&2 || {
            apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind binutils >&2; }
    }
done

PREFIX=nppc-$$
source bench/namespaces.sh
# Under /run, root-owned 0755 all the way: the hook must pass netpathd's trust checks.
WORK=/run/netpath-pathcost-$$
AGENT=
finish() {
    if [ -n "$AGENT" ]; then kill -KILL "$AGENT" 2>/dev/null || true; fi
    rm -rf "$WORK"
    cleanup
}
trap finish EXIT
mkdir -p -m 0755 "$WORK/hooks.d" "$WORK/out"
printf '#!/bin/sh\nexit 0\n' >"$WORK/hooks.d/10-hook"
chmod 0755 "$WORK/hooks.d/10-hook"
# bench/hooks.py's own one-rule configuration, so that this counts the path that phase times.
(cd bench && PYTHONDONTWRITEBYTECODE=1 python3 - "$WORK" "$WORK/hooks.d" <<'PY'
import sys
from hooks import netpathd_config
netpathd_config(sys.argv[1], sys.argv[2], link_rule="npb0")
PY
)
objcopy --strip-debug "$NETPATHD" "$WORK/netpathd"

new_ns "$PREFIX"
new_ns "$PREFIX-p"
add_veth "$PREFIX" "$PREFIX-p"

PUBLISH='$s12NetPathLinux13NetlinkEngineC7publish*'
ip netns exec "$PREFIX" valgrind --tool=callgrind --separate-threads=yes --dump-instr=yes \
    "--dump-before=$PUBLISH" --dump-before=np_spawn \
    --callgrind-out-file="$WORK/out/cg" "$WORK/netpathd" --config "$WORK/netpathd.toml" --control-socket "$WORK/netpathd.sock" \
    >"$WORK/out/log" 2>&1 &
AGENT=$!
for _ in $(seq 240); do
    grep -q "notice netpathd: ready" "$WORK/out/log" && break
    kill -0 "$AGENT" 2>/dev/null || { cat "$WORK/out/log" >&2; exit 1; }
    sleep 0.5
done
grep -q "notice netpathd: ready" "$WORK/out/log" || { echo "netpathd did not get ready" >&2; exit 1; }
# Each change waits for its hook's run (under callgrind on a busy machine that can take seconds)
# and a pause, so that changes never overlap.
hook_ran() { # COUNT: wait until the log has COUNT hook runs, 60 s at most
    for _ in $(seq 600); do
        [ "$(grep -c ': exited ' "$WORK/out/log")" -ge "$1" ] && return 0
        sleep 0.1
    done
    echo "pathcost: no hook run $1 within 60 s" >&2
    return 1
}
runs=$(grep -c ': exited ' "$WORK/out/log" || true)
for _ in $(seq "$TOGGLES"); do
    ip -n "$PREFIX-p" link set npb1 down
    runs=$((runs + 1)); hook_ran "$runs"
    sleep 0.3
    ip -n "$PREFIX-p" link set npb1 up
    runs=$((runs + 1)); hook_ran "$runs"
    sleep 0.3
done
kill -INT "$AGENT"
wait "$AGENT" || true
AGENT=

python3 - "$WORK/out" "$TOGGLES" "$WORK/netpathd" "${FUNCTIONS:-}" <<'PY'
import bisect, glob, re, subprocess, sys
out, toggles, binary, functions_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# cg.N-T: the N-th dump, thread T. A dump holds what ran since the thread's previous one, so
# a dump made before np_spawn whose previous dump was made before publish is one change's path.
threads = {}
for path in glob.glob(out + "/cg.*-*"):
    match = re.match(r".*/cg\.(\d+)-(\d+)$", path)
    if match:
        threads.setdefault(match.group(2), []).append((int(match.group(1)), path))
changes = []
for dumps in threads.values():
    previous = None
    for _, path in sorted(dumps):
        text = open(path, errors="replace").read()
        trigger = re.search(r"^desc: Trigger: (.*)$", text, re.M).group(1)
        total = int(re.search(r"^summary: (\d+)", text, re.M).group(1))
        if previous and "publish" in previous and trigger.startswith("--dump-before=np_spawn"):
            changes.append((total, path))
        previous = trigger
if len(changes) < toggles:
    sys.exit(f"only {len(changes)} of {2 * toggles} changes reached a spawn: see {out}/log")
changes.sort()
median, typical = changes[len(changes) // 2]
print(f"engine publish -> np_spawn: median {median:,} instructions per change "
      f"({len(changes)} changes; min {changes[0][0]:,}, max {changes[-1][0]:,})")


def executed(path):
    """The instructions a dump executed, per function: {function: {(object, address)}}."""
    # Callgrind numbers objects, files and functions each on their own: (3) may be all three.
    tables = {"ob": {}, "fl": {}, "fn": {}}
    kinds = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
             "fn": "fn", "cfn": "fn"}
    per_function = {}
    function = obj = None
    address = 0
    for row in open(path, errors="replace"):
        key, _, rest = row.partition("=")
        if key in kinds:
            match = re.match(r"\((\d+)\)(?: (.*))?", rest.rstrip("\n"))
            table = tables[kinds[key]]
            value = rest.strip()
            if match:
                if match.group(2):
                    table[match.group(1)] = match.group(2)
                value = table.get(match.group(1), "?")
            if key == "fn":
                function = value
            elif key == "ob":
                obj = value
            continue
        if not row or row[0] not in "+-*0":
            continue
        token = row.split()[0]
        if token.startswith("0x"):
            address = int(token, 16)
        elif token[0] == "+":
            address += int(token[1:])
        elif token[0] == "-":
            address -= int(token[1:])
        per_function.setdefault(function, set()).add((obj, address))
    return per_function


def code_lines(path):
    """The distinct 64-byte lines of code a dump executed, per function: what a change fetches
    into the instruction cache. Between changes 40 ms apart that cache (and the TLBs) has been
    refilled by other work, so each of these lines is a miss, and misses, not instructions,
    are most of the path's time (BENCHMARKS.md)."""
    return {function: {(obj, address >> 6) for obj, address in instructions}
            for function, instructions in executed(path).items()}


footprints = sorted((len(set().union(*code_lines(path).values())), path) for _, path in changes)
lines, _ = footprints[len(footprints) // 2]
print(f"code it runs: median {lines:,} distinct 64-byte lines per change ({lines * 64 // 1024} KiB; "
      f"min {footprints[0][0]:,}, max {footprints[-1][0]:,})")
print("a typical change, inclusive (callgrind_annotate):")
annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=95", typical],
                           capture_output=True, text=True).stdout
rows = annotated.split("file:function", 1)[-1].splitlines()
for row in [r for r in rows if re.match(r"^\s*[\d,]+ \(", r)][:40]:
    print("  " + row[:160])
print("the same change, the functions whose own code spans the most lines:")
per_function = code_lines(typical)
for function, spans in sorted(per_function.items(), key=lambda item: -len(item[1]))[:25]:
    print(f"  {len(spans):5}  {function[:150]}")

if functions_file:
    # By address, not by callgrind's names: it writes C++ names demangled, the linker wants the
    # symbols. (Callgrind writes an object's addresses less the offset it was loaded at: the
    # link-time addresses `nm` lists.)
    symbols = []
    for row in subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
        fields = row.split(maxsplit=2)
        if len(fields) == 3 and fields[1] in "tTwW":
            symbols.append((int(fields[0], 16), fields[2]))
    starts = [address for address, _ in symbols]
    names = set()
    for _, path in changes:
        for instructions in executed(path).values():
            for obj, address in instructions:
                index = bisect.bisect_right(starts, address) - 1
                if obj and obj.endswith("/netpathd") and index >= 0:
                    names.add(symbols[index][1])
    with open(functions_file, "w") as listing:
        listing.writelines(name + "\n" for name in sorted(names))
    print(f"{len(names)} functions ran in a change: {functions_file}")
PY
