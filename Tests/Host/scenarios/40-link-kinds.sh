# SPDX-License-Identifier: Apache-2.0
# Link kinds this machine's own kernel lacks, on Debian's: dummy, vlan, bond and its ports,
# bridge, macvlan, wireguard. Each is reported with the kind the kernel gives it (`ip -d link`)
# and classified as docs/configuration.md says, and its events reach hooks.
set -euo pipefail
. ../lib.sh
ensure_installed
reset_config
install_event_hook

say "making one link of each kind"
ip link add dummy0 type dummy
ip link add link dummy0 name dummy0.10 type vlan id 10
ip link add bond0 type bond mode active-backup
ip link add bport0 type dummy
ip link add bport1 type dummy
ip link set bport0 master bond0
ip link set bport1 master bond0
ip link add br0 type bridge
ip link add mv0 link dummy0 type macvlan mode bridge
ip link add wg0 type wireguard
for link in dummy0 dummy0.10 bond0 bport0 bport1 br0 mv0 wg0; do ip link set "$link" up; done
ip addr add 203.0.113.1/24 dev bond0

kernel_kind() { # what the kernel says the link is: IFLA_INFO_KIND, as ip -d -j link shows it
	ip -d -j link show dev "$1" | jq -r '.[0].linkinfo.info_kind // ""'
}
for link in dummy0:dummy dummy0.10:vlan bond0:bond bport0:dummy bport1:dummy br0:bridge mv0:macvlan wg0:wireguard; do
	name=${link%%:*} want=${link#*:}
	[ "$(kernel_kind "$name")" = "$want" ] || fail "the kernel calls $name '$(kernel_kind "$name")', not $want"
	wait_for 20 "netpath reports $name" bash -c "netpathctl status --json | jq -e --arg n $name '.interfaces[] | select(.name == \$n)'"
	kind=$(interface_field "$name" kind)
	type=$(interface_field "$name" type)
	[ "$kind" = "$want" ] || fail "$name: netpath's kind is '$kind', the kernel's is $want"
	[ "$type" = other ] || fail "$name: type $type; docs/configuration.md says a $want link is other"
	wait_for 20 "the hook saw $name added, as other/$want" hook_saw added "$name" other "$want"
done

say "a bond's port follows the bond: its carrier goes when the bond goes down"
ip link set bond0 down
wait_for 20 "the hook saw bond0 carrier-down" hook_saw carrier-down bond0 other bond
[ "$(ip -j link show dev bport0 | jq -r '.[0].master')" = bond0 ] || fail "bport0 is not bond0's port"
[ "$(interface_field bond0 admin_up)" = false ] || fail "netpath still shows bond0 admin up"

say "removing them: removed events"
for link in mv0 dummy0.10 dummy0 bport0 bport1 bond0 br0 wg0; do ip link del "$link"; done
for link in mv0 dummy0.10 dummy0 bond0 br0 wg0; do
	wait_for 20 "the hook saw $link removed" bash -c "grep -q '^removed $link ' $HOOK_LOG"
done
