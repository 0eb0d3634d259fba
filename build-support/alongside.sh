#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
#   build-support/alongside.sh LABEL 'BACKGROUND COMMAND' FOREGROUND COMMAND...
#
# Runs the background command (a shell command line, its output to LABEL's log in .build) while
# the foreground command runs, then waits for it; fails when either failed, printing the
# background's log when it did. `make test` builds the release binaries this way while the
# parallel tests run: the compiler keeps the cores busy while those tests mostly wait on the
# kernel and on each other.
label=$1
background=$2
shift 2
mkdir -p .build
log=.build/$label.log
start=$(date +%s)
sh -c "$background" >"$log" 2>&1 &
pid=$!
"$@"
status=$?
wait "$pid"
background_status=$?
echo "make test: $label (alongside) took $(($(date +%s) - start)) s" >&2
if [ "$background_status" -ne 0 ]; then
	cat "$log" >&2
	echo "make test: $label failed (its output above, and in $log)" >&2
	exit "$background_status"
fi
exit $status
