#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the guest (netpath-host-test.service): every scenario in /host/scenarios in name
# order, each in a bash of its own. Writes /host/results/summary, one line a scenario:
# `PASS|FAIL NAME SECONDS`, then `END`; a failed scenario leaves NAME.log (its output) and
# NAME.journal (the guest's journal since the scenario began).
#
# A scenario that needs a boot of its own (what happens at boot is what it tests) prepares the
# next boot and exits with status 75: the guest powers off, run.sh boots it again on the same
# disk, and this script then runs that scenario again with NETPATH_HOST_BOOT=2 to check
# the boot, and goes on with the scenarios after it.
set -u
results=/host/results
mkdir -p "$results"
resume=""
if [ -f "$results/reboot" ]; then
	resume=$(cat "$results/reboot")
	rm -f "$results/reboot"
else
	: >"$results/summary"
fi
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
	# After a reboot: the scenarios before the one that asked for it are done.
	if [ -n "$resume" ]; then
		[ "$name" = "$resume" ] || continue
		resume=""
		boot=2
		cursor=""  # its journal is this boot's, from the start
	else
		boot=1
		cursor=$(journalctl -n 0 --show-cursor -q 2>/dev/null | sed -n 's/^-- cursor: //p')
	fi
	start=$(date +%s%N)
	echo "=== $name (boot $boot)" >/dev/console
	(cd /host/scenarios && NETPATH_HOST_BOOT=$boot exec bash "$scenario") >>"$results/$name.log" 2>&1
	status=$?
	if [ $status -eq 75 ] && [ $boot -eq 1 ]; then
		# The unit powers the guest off when this script ends; run.sh sees the request and boots
		# it again.
		echo "$name" >"$results/reboot"
		sync
		exit 0
	fi
	seconds=$(( ($(date +%s%N) - start) / 1000000 ))
	seconds=$((seconds / 1000)).$(printf '%03d' $((seconds % 1000)))
	if [ $status -eq 0 ]; then
		echo "PASS $name $seconds" >>"$results/summary"
	else
		echo "FAIL $name $seconds" >>"$results/summary"
		if [ -n "$cursor" ]; then since=(--after-cursor="$cursor"); else since=(-b); fi
		journalctl -q --no-pager -o short-monotonic "${since[@]}" >"$results/$name.journal" 2>&1
	fi
done
echo END >>"$results/summary"
sync
