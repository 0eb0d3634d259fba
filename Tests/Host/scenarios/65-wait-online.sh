# SPDX-License-Identifier: Apache-2.0
# network-online.target from netpath-wait-online: installed, not enabled by the package; once
# enabled (with --connectivity full in a drop-in, as docs/wait-online.md shows), a unit with
# Wants=/After=network-online.target starts only after netpath's default policy is satisfied and
# its probe (ICMP to an endpoint in a namespace) says full. Then a boot of its own with no uplink
# at all: multi-user.target is reached after wait-online's timeout, with its reason in the journal.
set -euo pipefail
. ../lib.sh
ensure_installed

client=/etc/systemd/system/np-online-client.service
dropin=/etc/systemd/system/netpath-wait-online.service.d/50-test.conf
stamp=/var/lib/np-online-client.started

if [ "${NETPATH_HOST_BOOT:-1}" = 2 ]; then
	on_exit reset_config
	on_exit systemctl daemon-reload
	on_exit rm -rf "$client" "$dropin" "$(dirname "$dropin")" "$stamp"
	on_exit systemctl disable np-online-client.service netpath-wait-online.service

	say "boot 2, no uplink: wait-online gave up after its timeout and the boot went on"
	wait_for 120 "multi-user.target is active" field_is active unit_property multi-user.target ActiveState
	[ "$(unit_property netpath-wait-online.service Result)" = exit-code ] ||
		fail "netpath-wait-online's result is $(unit_property netpath-wait-online.service Result), not exit-code: $(systemctl status netpath-wait-online.service 2>&1 | tail -n 5)"
	[ "$(unit_property netpath-wait-online.service ExecMainStatus)" = 1 ] ||
		fail "netpath-wait-online exited $(unit_property netpath-wait-online.service ExecMainStatus), not 1 (timed out)"
	journal=$(journalctl -b -u netpath-wait-online.service -o cat)
	echo "$journal" | grep -x "netpathctl wait-online: not online within 15 s: policy default is unsatisfied (no-interface)" >/dev/null ||
		fail "wait-online's journal does not give its reason: $journal"
	[ "$(unit_property network-online.target ActiveState)" = active ] || fail "network-online.target was not reached"
	[ -e "$stamp" ] || fail "the client unit did not run in boot 2"
	exited=$(unit_property netpath-wait-online.service ExecMainExitTimestampMonotonic)
	started=$(unit_property np-online-client.service ExecMainStartTimestampMonotonic)
	[ "$started" -ge "$exited" ] ||
		fail "the client started at $started us, before wait-online ended at $exited us"
	waited=$(($(unit_property netpath-wait-online.service ExecMainExitTimestampMonotonic) - $(unit_property netpath-wait-online.service ExecMainStartTimestampMonotonic)))
	[ "$waited" -ge 15000000 ] || fail "wait-online ended after $waited us, before its 15 s timeout"
	exit 0
fi

say "the package installs netpath-wait-online and leaves it disabled"
[ "$(systemctl is-enabled netpath-wait-online.service 2>&1 || true)" = disabled ] ||
	fail "netpath-wait-online is $(systemctl is-enabled netpath-wait-online.service 2>&1 || true) after install, not disabled"

say "an uplink whose gateway does not answer yet, probed by ICMP"
new_namespace isp
ip link add wan0 type veth peer name wan0p netns isp
ip -n isp link set wan0p up
ip link set wan0 up
ip addr add 10.66.0.2/24 dev wan0
ip route add default via 10.66.0.1 dev wan0
on_exit ip link del wan0
cat >/root/wait-online.toml <<-'EOF'
	[connectivity]
	method = "icmp"
	hosts = ["10.66.0.1"]
	timeout = "1s"
	interval = "2s"
EOF
use_config /root/wait-online.toml
wait_for 30 "netpath's default policy is satisfied via wan0" field_is wan0 path_field default primary
if ! (wait_for 30 "the probe says none for wan0" field_is none interface_field wan0 connectivity); then
	fail "wan0's connectivity is $(interface_field wan0 connectivity), not none; netpathctl probe wan0: $(netpathctl probe wan0 2>&1); explain: $(netpathctl explain 2>&1 | grep -i -A3 connectivity)"
fi

say "enabled with --connectivity full in a drop-in; a unit that wants network-online.target"
install -d -m 0755 "$(dirname "$dropin")"
printf '[Service]\nExecStart=\nExecStart=/usr/bin/netpathctl wait-online --connectivity full --timeout 90\n' >"$dropin"
cat >"$client" <<-EOF
	[Unit]
	Wants=network-online.target
	After=network-online.target

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/bin/touch $stamp

	[Install]
	WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable netpath-wait-online.service np-online-client.service 2>/dev/null
[ -L /etc/systemd/system/network-online.target.wants/netpath-wait-online.service ] ||
	fail "enable did not put netpath-wait-online in network-online.target.wants"
# The target was reached at boot, before the unit was enabled: take it down, so that starting the
# client pulls it in, and the wait with it, as a boot does.
systemctl stop network-online.target netpath-wait-online.service
rm -f "$stamp"
systemctl start --no-block np-online-client.service
wait_for 30 "netpath-wait-online is waiting (activating)" field_is activating unit_property netpath-wait-online.service ActiveState
wait_for 30 "wait-online says what it waits for" bash -c \
	"journalctl -u netpath-wait-online.service -o cat | grep 'waiting: policy default via wan0 (.*) has connectivity none, not full' >/dev/null"
[ ! -e "$stamp" ] || fail "the client ran although the path's connectivity is none"
[ "$(unit_property np-online-client.service ActiveState)" = inactive ] ||
	fail "the client is $(unit_property np-online-client.service ActiveState) while wait-online waits"

say "the gateway answers: the probe says full, wait-online ends, then the client starts"
ip -n isp addr add 10.66.0.1/24 dev wan0p
wait_for 60 "the client unit ran" test -e "$stamp"
[ "$(unit_property netpath-wait-online.service Result)" = success ] ||
	fail "netpath-wait-online's result is $(unit_property netpath-wait-online.service Result)"
[ "$(interface_field wan0 connectivity)" = full ] || fail "netpath's wan0 is $(interface_field wan0 connectivity), not full"
journalctl -u netpath-wait-online.service -o cat | grep -x "online: policy default via wan0 (.*)" >/dev/null ||
	fail "wait-online's journal has no online line: $(journalctl -u netpath-wait-online.service -o cat)"
exited=$(unit_property netpath-wait-online.service ExecMainExitTimestampMonotonic)
started=$(unit_property np-online-client.service ExecMainStartTimestampMonotonic)
[ "$started" -ge "$exited" ] || fail "the client started at $started us, before wait-online ended at $exited us"
# netpathd's own log of the verdict comes before wait-online's end.
full_at=$(journalctl -u netpathd.service -o json | jq -r 'select(.MESSAGE | test("connectivity-changed")) | .__MONOTONIC_TIMESTAMP' | tail -n 1)
[ -n "$full_at" ] && [ "$full_at" -le "$exited" ] ||
	fail "netpathd logged no connectivity change before wait-online ended ($full_at, $exited)"

say "the next boot has no uplink: wait-online with a 15 s timeout"
printf '[Service]\nExecStart=\nExecStart=/usr/bin/netpathctl wait-online --timeout 15\n' >"$dropin"
rm -f "$stamp"
journalctl --flush
sync
exit 75
