# SPDX-License-Identifier: Apache-2.0
# route-metrics beside a manager that owns the routes: systemd-networkd puts both DHCP default
# routes at its own metric (1024); the plugin makes the policy's primary the kernel's choice, keeps
# it so when networkd configures the link again, and gives networkd's metrics back on stop.
set -euo pipefail
. ../lib.sh
ensure_installed

# default_metric DEV: the metric of DEV's default route in the main table, as the kernel has it
# (several lines when there are several).
default_metric() {
	ip -j route show table main default dev "$1" | jq -r '.[].metric // 0'
}
# The interface the kernel itself picks for internet traffic: a lookup, nothing is sent.
kernel_choice() {
	ip -j route get 192.0.2.1 | jq -r '.[0].dev'
}

say "netpath: lan2 wired, lan1 cellular, a policy preferring wired, route-metrics enforcing it"
cat >/root/route-metrics.toml <<-'EOF'
	[[interface]]
	match = "lan1"
	type = "cellular"

	[[interface]]
	match = "lan2"
	type = "wired"

	[[policy]]
	name = "uplink"
	prefer = ["wired", "cellular"]

	[plugin.route-metrics]
	policy = "uplink"

	[[rule]]
	name = "enforce-prefer"
	on = ["satisfied", "unsatisfied", "changed", "up", "down"]
	plugins = ["route-metrics"]
EOF
use_config /root/route-metrics.toml
on_exit reset_config

say "networkd takes a lease on lan1 and on lan2, each default route at networkd's metric"
lan_with_dhcp lan1 203.0.113
lan_with_dhcp lan2 198.51.100
on_exit ip link del lan1
on_exit ip link del lan2
mkdir -p /run/systemd/network
on_exit systemctl stop systemd-networkd.service systemd-networkd.socket
on_exit rm -f /run/systemd/network/50-lan.network
printf '[Match]\nName=lan1 lan2\n\n[Network]\nDHCP=ipv4\nIPv6AcceptRA=no\nLinkLocalAddressing=no\n' \
	>/run/systemd/network/50-lan.network
systemctl restart systemd-networkd.service
for link in lan1 lan2; do
	wait_for 60 "networkctl says $link is routable" bash -c "networkctl status $link | grep -q 'State: routable'"
done

say "route-metrics makes the policy's primary, lan2, the kernel's choice"
wait_for 20 "the uplink policy's primary is lan2" field_is lan2 path_field uplink primary
wait_for 20 "lan2's default route at the wired base 100" field_is 100 default_metric lan2
wait_for 20 "lan1's default route at the cellular base 700" field_is 700 default_metric lan1
[ "$(kernel_choice)" = lan2 ] || fail "the kernel routes through $(kernel_choice), not lan2: $(ip route show default)"

say "networkd configures lan2 again (its own route back at 1024): the plugin ranks it again"
networkctl reconfigure lan2
wait_for 60 "networkctl says lan2 is routable again" bash -c "networkctl status lan2 | grep -q 'State: routable'"
wait_for 30 "lan2's one default route is back at 100 after networkd's reconfigure" field_is 100 default_metric lan2
[ "$(kernel_choice)" = lan2 ] || fail "after networkd's reconfigure the kernel routes through $(kernel_choice): $(ip route show default)"
networkctl status lan2 | grep 'State: routable' >/dev/null || fail "networkd no longer calls lan2 routable: $(networkctl status lan2)"

say "netpathd stops: networkd's own metrics are back"
systemctl stop netpathd.service
field_is 1024 default_metric lan1 || fail "lan1's default route is not back at networkd's 1024: $(ip route show default)"
field_is 1024 default_metric lan2 || fail "lan2's default route is not back at networkd's 1024: $(ip route show default)"
systemctl start netpathd.service
