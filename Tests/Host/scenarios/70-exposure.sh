# SPDX-License-Identifier: Apache-2.0
# Exposure: `systemd-analyze security` on the real host, netpathd beside the managers people run.
# Fails when netpathd's score gets worse than the recorded one (BENCHMARKS.md).
set -euo pipefail
. ../lib.sh
ensure_installed

ceiling=5.1
score() { # UNIT: systemd-analyze's overall exposure, e.g. "5.1 MEDIUM"
	systemd-analyze security --no-pager "$1" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]* [A-Z]*\).*/\1/p'
}
{
	echo "host phase: systemd-analyze security (exposure, lower is safer):"
	for unit in netpathd.service systemd-networkd.service NetworkManager.service; do
		printf 'host phase:   %-26s %s\n' "$unit" "$(score "$unit")"
	done
} | tee "$HOST/results/exposure.report"
netpathd=$(score netpathd.service)
[ -n "$netpathd" ] || fail "systemd-analyze security printed no score for netpathd"
awk -v s="${netpathd% *}" -v c="$ceiling" 'BEGIN { exit !(s <= c) }' ||
	fail "netpathd's exposure is $netpathd, worse than the recorded $ceiling"
