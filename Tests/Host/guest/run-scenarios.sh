#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the guest (netpath-host-test.service): every scenario in /host/scenarios in name
# order, each in a bash of its own. Writes /host/results/summary, one line a scenario:
# `PASS|FAIL NAME SECONDS`, then `END`; a failed scenario leaves NAME.log (its output) and
# NAME.journal (the guest's journal since the scenario began).
set -u
results=/host/results
mkdir -p "$results"
: >"$results/summary"
# What the host phase measures against: the guest's own versions.
{
	uname -r
	systemctl --version | head -n 1
	NetworkManager --version 2>/dev/null | sed 's/^/NetworkManager /'
} >"$results/versions"
# NETPATH_HOST_ONLY on the host (a part of a scenario's name) reaches the guest as /host/only.
only=$(cat /host/only 2>/dev/null)
for scenario in /host/scenarios/[0-9]*.sh; do
	name=$(basename "$scenario" .sh)
	if [ -n "$only" ] && ! [[ $name == *"$only"* ]]; then continue; fi
	cursor=$(journalctl -n 0 --show-cursor -q 2>/dev/null | sed -n 's/^-- cursor: //p')
	start=$(date +%s%N)
	echo "=== $name" >/dev/console
	(cd /host/scenarios && exec bash "$scenario") >"$results/$name.log" 2>&1
	status=$?
	seconds=$(( ($(date +%s%N) - start) / 1000000 ))
	seconds=$((seconds / 1000)).$(printf '%03d' $((seconds % 1000)))
	if [ $status -eq 0 ]; then
		echo "PASS $name $seconds" >>"$results/summary"
	else
		echo "FAIL $name $seconds" >>"$results/summary"
		journalctl -q --no-pager -o short-monotonic ${cursor:+--after-cursor="$cursor"} >"$results/$name.journal" 2>&1
	fi
done
echo END >>"$results/summary"
sync
