# SPDX-License-Identifier: Apache-2.0
# Beside systemd-networkd: networkd takes a DHCP lease from dnsmasq in a namespace; netpath's
# view agrees with networkctl's, and the networkd dialect runs the networkd-dispatcher script
# Debian's chrony installs, unchanged, with chronyd really switching its source online.
set -euo pipefail
. ../lib.sh
ensure_installed
chrony_with_one_offline_source

say "netpath with the networkd dialect, and a script of our own beside chrony's"
printf '[[hook_dir]]\ndialect = "networkd"\n' >/root/networkd.toml
install -d -m 0755 /etc/networkd-dispatcher/routable.d
printf '#!/bin/sh\necho "$IFACE $STATE $OperationalState $ADDR" >>/var/log/netpath/networkd-dialect\n' \
	>/etc/networkd-dispatcher/routable.d/50-record
chmod 0755 /etc/networkd-dispatcher/routable.d/50-record
on_exit rm -f /etc/networkd-dispatcher/routable.d/50-record
use_config /root/networkd.toml
rm -f /var/log/netpath/networkd-dialect
netpathctl hooks | grep "chrony-onoffline" >/dev/null || fail "netpathctl hooks does not list chrony's script: $(netpathctl hooks)"

say "networkd takes a lease on lan0 from dnsmasq"
lan_with_dhcp lan0
on_exit ip link del lan0
mkdir -p /run/systemd/network
on_exit systemctl stop systemd-networkd.service systemd-networkd.socket chrony.service
on_exit rm -f /run/systemd/network/50-lan0.network
printf '[Match]\nName=lan0\n\n[Network]\nDHCP=ipv4\nIPv6AcceptRA=no\nLinkLocalAddressing=no\n' \
	>/run/systemd/network/50-lan0.network
systemctl restart systemd-networkd.service
wait_for 60 "networkctl says lan0 is routable" bash -c "networkctl status lan0 | grep -q 'State: routable'"

say "netpath agrees with networkctl"
lease=$(networkctl status lan0 | sed -n 's/^ *Address: \([0-9.]*\) (DHCP4.*/\1/p')
gateway=$(networkctl status lan0 | sed -n 's/^ *Gateway: \([0-9.]*\).*/\1/p')
[ -n "$lease" ] || fail "networkctl shows no DHCP address: $(networkctl status lan0)"
wait_for 20 "netpath has networkd's lease $lease on lan0" has_address lan0 "$lease"
wait_for 20 "the default policy's primary is lan0" field_is lan0 path_field default primary
[ "$(path_field default 'gateways[0]')" = "$gateway" ] ||
	fail "netpath's gateway $(path_field default 'gateways[0]') is not networkctl's $gateway"
netpathctl explain | grep lan0 >/dev/null || fail "explain does not mention lan0: $(netpathctl explain)"

say "the networkd dialect: routable.d ran with networkctl's state, and chrony's script worked"
wait_for 30 "our routable.d script ran for lan0 (routable, $lease)" \
	grep -q "^lan0 routable routable $lease" /var/log/netpath/networkd-dialect
wait_for 30 "chronyd's source is online (chrony's routable.d script ran chronyc onoffline)" chrony_online 1

say "lan0 goes down: chrony's off.d script takes the source offline again"
ip link set lan0 down
wait_for 30 "chronyd's source is offline again (chrony's off.d script ran)" chrony_online 0

