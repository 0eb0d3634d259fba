# SPDX-License-Identifier: Apache-2.0
# Helpers the scenarios source (bash). A scenario fails at its first failed check: `fail` names
# what was expected and what the guest's own tools reported instead.
# A pipeline's check ends in `grep PATTERN >/dev/null`, never `grep -q`: grep -q leaves at the first
# match, and under pipefail the writer's SIGPIPE would fail the check.

HOST=/host
HOOK_LOG=/var/log/netpath/hook-events

fail() {
	echo "FAILED: $*" >&2
	exit 1
}

say() {
	echo "--- $*"
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND until it succeeds, at most SECONDS; a bounded
# wait for state that a manager, the kernel or the agent reaches asynchronously (no event to
# block on from a shell). Fails naming WHAT.
wait_for() {
	local seconds=$1 what=$2
	shift 2
	local deadline=$((SECONDS + seconds))
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || fail "not within ${seconds}s: $what"
		sleep 0.2
	done
}

unit_property() {
	systemctl show -P "$2" "$1"
}

# The agent's own view, over its control socket.
status_json() {
	netpathctl status --json
}

interface_field() { # NAME FIELD
	status_json | jq -r --arg n "$1" ".interfaces[] | select(.name == \$n) | .$2"
}

path_field() { # POLICY FIELD
	status_json | jq -r --arg p "$1" ".paths[] | select(.policy == \$p) | .$2"
}

field_is() { # VALUE COMMAND...: COMMAND prints VALUE
	local want=$1
	shift
	[ "$("$@" 2>/dev/null)" = "$want" ]
}

ensure_installed() {
	if ! dpkg-query -W -f '${Status}' netpath 2>/dev/null | grep 'install ok installed' >/dev/null; then
		dpkg -i "$HOST/netpath.deb" >/dev/null
	fi
	wait_for 60 "netpathd active" field_is active unit_property netpathd.service ActiveState
	# The configuration the package shipped, for reset_config.
	[ -f /root/netpath.toml.shipped ] || cp /etc/netpath/netpath.toml /root/netpath.toml.shipped
}

# reset_config: the shipped configuration and no hooks, the agent restarted on them.
reset_config() {
	rm -f /etc/netpath/hooks.d/*
	use_config /root/netpath.toml.shipped
}

# use_config FILE: installs FILE as /etc/netpath/netpath.toml and restarts the agent on it.
use_config() {
	install -m 0644 "$1" /etc/netpath/netpath.toml
	systemctl restart netpathd.service
	wait_for 60 "netpathd active on $1" field_is active unit_property netpathd.service ActiveState
}

# A hook that appends one line per event to $HOOK_LOG: EVENT INTERFACE TYPE KIND.
install_event_hook() {
	install -d -m 0755 /etc/netpath/hooks.d
	cat >/etc/netpath/hooks.d/10-record <<-'EOF'
		#!/bin/sh
		echo "$NETPATH_EVENT ${NETPATH_INTERFACE:--} ${NETPATH_INTERFACE_TYPE:--} ${NETPATH_INTERFACE_KIND:--}" >>/var/log/netpath/hook-events
	EOF
	chmod 0755 /etc/netpath/hooks.d/10-record
	: >"$HOOK_LOG"
}

hook_saw() { # EVENT INTERFACE [TYPE [KIND]]: a line of $HOOK_LOG; TYPE and KIND default to any
	grep -q "^$1 $2 ${3:-[^ ]*} ${4:-[^ ]*}\$" "$HOOK_LOG"
}

has_address() { # NAME ADDRESS: netpath shows ADDRESS on NAME
	status_json | jq -e --arg n "$1" --arg a "$2" \
		'.interfaces[] | select(.name == $n) | .addresses[] | select(.address == $a)' >/dev/null
}

# chronyd with one NTP source behind the LAN (203.0.113.1), offline until a route to it exists:
# chrony's dispatcher scripts run `chronyc onoffline`, which sets online the sources that have a
# route, so chronyd's own count shows whether they ran and worked.
chrony_with_one_offline_source() {
	printf 'server 203.0.113.1 iburst offline\ndriftfile /var/lib/chrony/chrony.drift\n' >/etc/chrony/chrony.conf
	systemctl restart chrony.service
	wait_for 30 "chronyd answers chronyc" chronyc -n activity
	chrony_online 0 || fail "chrony's source is online before any route: $(chronyc -n activity)"
}
chrony_online() { # COUNT: chronyd has COUNT sources online
	chronyc -n activity | grep "^$1 sources online" >/dev/null
}

# lan_with_dhcp NAME [NET]: a veth NAME whose peer, in a namespace of its own (NAME-lan), has
# NET.1/24 (NET defaults to 203.0.113) and serves DHCP (dnsmasq) with itself as the router.
lan_with_dhcp() {
	local net=${2:-203.0.113} ns="$1-lan"
	new_namespace "$ns"
	ip link add "$1" type veth peer name "$1-peer" netns "$ns"
	ip -n "$ns" link set "$1-peer" up
	ip -n "$ns" addr add "$net.1/24" dev "$1-peer"
	ip netns exec "$ns" dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --port=0 --interface="$1-peer" \
		--bind-interfaces --dhcp-range="$net.50,$net.99,1h" --dhcp-option="option:router,$net.1" \
		--pid-file="/run/dnsmasq-$ns.pid" --dhcp-leasefile="/run/dnsmasq-$ns.leases"
}

# What a scenario undoes when it exits, passed or failed: `on_exit COMMAND...` queues a command
# (run last-queued first), and the namespaces it made go after them.
CLEANUPS=()
on_exit() {
	CLEANUPS+=("$*")
}
run_cleanups() {
	local i
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" >/dev/null 2>&1 || true; done
	cleanup_namespaces
}

NAMESPACES=()
new_namespace() {
	ip netns add "$1"
	NAMESPACES+=("$1")
}
cleanup_namespaces() {
	local ns pid
	for ns in "${NAMESPACES[@]}"; do
		# bash's own kill: the guest has no procps, as a minimal Debian has none.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
}
trap run_cleanups EXIT
