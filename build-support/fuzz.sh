#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
#   build-support/fuzz.sh run|smoke SECONDS BIN_DIR WORK_DIR HARNESS...
#
# Runs the libFuzzer harnesses that `make fuzz-build` built in BIN_DIR (docs/fuzzing.md).
#
# run:   each harness fuzzes for SECONDS (-max_total_time), starting from its committed corpus
#        (Fuzz/NAME/corpus, read only) and what earlier runs found (WORK_DIR/NAME/corpus, where
#        new inputs go, so that the tree stays clean). A crash is saved as WORK_DIR/NAME/crash-…
# smoke: each harness runs once over every file of its committed corpus, then fuzzes for
#        SECONDS from an empty scratch corpus: what `make test` runs, so that a harness that no
#        longer builds, or crashes on its corpus, fails CI.
#
# Prints one line per harness (seconds, inputs run, result) and exits non-zero if any failed;
# its log is WORK_DIR/NAME/last.log.
#
# LeakSanitizer is off: Swift stores an enum's case in the spare bits of its payload's pointer,
# so LeakSanitizer does not recognise such a pointer and reports what it points to as leaked (the
# ranges of a Glob's `[a-z]` token, held by a static ignore list, for one). Leaks are the
# sanitizer runs' business (`make test-sanitizers`).
set -u
mode=$1 seconds=$2 bin=$3 work=$4
shift 4
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# The Swift runtime's backtracer would race AddressSanitizer's report of the same crash.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
failed=""
for name in "$@"; do
    corpus="Fuzz/$name/corpus"
    dir="$work/$name"
    mkdir -p "$dir/corpus"
    log="$dir/last.log"
    set -- -detect_leaks=0 -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/"
    [ -f "Fuzz/$name/$name.dict" ] && set -- "$@" -dict="Fuzz/$name/$name.dict"
    start=$(date +%s)
    status=0
    if [ "$mode" = smoke ]; then
        # Every committed input once (files, not a directory: libFuzzer then runs them and stops).
        "$bin/fuzz-$name" "$@" "$corpus"/* >"$log" 2>&1 || status=$?
        if [ $status -eq 0 ]; then
            rm -rf "$dir/smoke" && mkdir -p "$dir/smoke"
            "$bin/fuzz-$name" "$@" -max_total_time="$seconds" "$dir/smoke" >>"$log" 2>&1 || status=$?
        fi
    else
        "$bin/fuzz-$name" "$@" -max_total_time="$seconds" "$dir/corpus" "$corpus" >"$log" 2>&1 || status=$?
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{ total += $1 } END { print total + 0 }')
    result=ok
    if [ $status -ne 0 ]; then
        result="FAILED (exit $status; $log)"
        failed="$failed $name"
    fi
    echo "fuzz $mode: $name: $(($(date +%s) - start)) s, $runs inputs, $result"
done
if [ -n "$failed" ]; then
    echo "fuzz $mode: failed:$failed (docs/fuzzing.md: reproducing a crash)" >&2
    exit 1
fi
