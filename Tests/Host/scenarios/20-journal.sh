# SPDX-License-Identifier: Apache-2.0
# A clean journal: a normal start and stop log nothing at warning or above, and nothing but
# netpathd's own lines (a library or runtime writing to stderr is noise the admin cannot act on).
set -euo pipefail
. ../lib.sh
ensure_installed
reset_config

# journal_since CURSOR: netpathd's entries (its own lines, and systemd's about its unit) as JSON.
journal_since() {
	journalctl -q --no-pager -o json --after-cursor="$1" _SYSTEMD_UNIT=netpathd.service + UNIT=netpathd.service
}
cursor_now() {
	journalctl -n 0 --show-cursor -q | sed -n 's/^-- cursor: //p'
}
# start_and_stop: one restart cycle; prints the journal cursor from before it.
start_and_stop() {
	local cursor
	cursor=$(cursor_now)
	systemctl stop netpathd.service
	systemctl start netpathd.service
	wait_for 60 "netpathd active" field_is active unit_property netpathd.service ActiveState
	# One event's worth of work, so the hook and event paths have run too.
	ip link add quiet0 type dummy
	ip link set quiet0 up
	ip link del quiet0
	systemctl stop netpathd.service
	echo "$cursor"
}
noise() { # CURSOR: the entries that are warnings or worse, or not netpathd's own format
	journal_since "$1" | jq -r '
		select((.PRIORITY | tonumber) <= 4 or
			(._COMM == "netpathd" and (.MESSAGE | type == "string") and (.MESSAGE | test("^netpath[a-z.-]*: ") | not)))
		| "\(.PRIORITY) \(._COMM // "?"): \(.MESSAGE)"'
}

say "a start, an event and a stop: no warning, no foreign line"
cursor=$(start_and_stop)
found=$(noise "$cursor")
[ -z "$found" ] || fail "the journal has lines the admin cannot act on:
$found"
[ -n "$(journal_since "$cursor" | jq -r 'select(._COMM == "netpathd") | .MESSAGE' | head -n 1)" ] ||
	fail "netpathd logged nothing at all: the check above would pass vacuously"

say "the control: with LimitNICE=0, the default (the defect put back) the check sees the runtime's line"
mkdir -p /run/systemd/system/netpathd.service.d
printf '[Service]\nLimitNICE=0\n' >/run/systemd/system/netpathd.service.d/nice.conf
systemctl daemon-reload
cursor=$(start_and_stop)
rm -r /run/systemd/system/netpathd.service.d
systemctl daemon-reload
noise "$cursor" | grep "Failed to set thread priority" >/dev/null ||
	fail "without LimitNICE the runtime's priority message did not appear, so the check above proves nothing: $(noise "$cursor")"
systemctl start netpathd.service
wait_for 60 "netpathd active" field_is active unit_property netpathd.service ActiveState
