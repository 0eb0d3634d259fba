# SPDX-License-Identifier: Apache-2.0
# Beside NetworkManager 1.42: NetworkManager takes a DHCP lease on a veth; netpath's view agrees
# with nmcli's, and the NetworkManager dialect runs the dispatcher script Debian's chrony
# installs, unchanged. NetworkManager's own dispatcher is masked, so only netpath can have run it.
set -euo pipefail
. ../lib.sh
ensure_installed
chrony_with_one_offline_source

say "netpath with the NetworkManager dialect; NetworkManager's own dispatcher masked"
systemctl mask --runtime NetworkManager-dispatcher.service
on_exit systemctl unmask --runtime NetworkManager-dispatcher.service
printf '[[hook_dir]]\npath = ["/etc/NetworkManager/dispatcher.d", "/usr/lib/NetworkManager/dispatcher.d"]\ndialect = "networkmanager"\n' \
	>/root/nm.toml
printf '#!/bin/sh\necho "$1 $2 ${IP4_ADDRESS_0:-} ${DEVICE_IFACE:-}" >>/var/log/netpath/nm-dialect\n' \
	>/etc/NetworkManager/dispatcher.d/50-record
chmod 0755 /etc/NetworkManager/dispatcher.d/50-record
on_exit rm -f /etc/NetworkManager/dispatcher.d/50-record
use_config /root/nm.toml
rm -f /var/log/netpath/nm-dialect

say "NetworkManager takes a lease on lan1 from dnsmasq"
lan_with_dhcp lan1
on_exit ip link del lan1
# Without this NetworkManager makes a "Wired connection 1" of its own for lan1 and activates it
# as soon as `connection down` took ours away: netpath then rightly ran down and up again.
mkdir -p /run/NetworkManager/conf.d
printf '[main]\nno-auto-default=*\n' >/run/NetworkManager/conf.d/90-netpath-test.conf
on_exit rm -f /run/NetworkManager/conf.d/90-netpath-test.conf
systemctl start NetworkManager.service
on_exit systemctl stop NetworkManager.service chrony.service
wait_for 60 "NetworkManager answers nmcli" nmcli -t general status
# NetworkManager's udev rules leave veths unmanaged; this one is ours to give it.
nmcli device set lan1 managed yes
nmcli connection add type ethernet ifname lan1 con-name lan1 ipv4.method auto ipv6.method disabled >/dev/null
nmcli connection up lan1 >/dev/null
wait_for 60 "nmcli says lan1 is connected" bash -c "nmcli -g GENERAL.STATE device show lan1 | grep -q '^100'"

say "netpath agrees with nmcli"
address=$(nmcli -g IP4.ADDRESS device show lan1 | cut -d'|' -f1 | tr -d ' ')
gateway=$(nmcli -g IP4.GATEWAY device show lan1)
[ -n "$address" ] || fail "nmcli shows no address on lan1"
wait_for 20 "netpath has NetworkManager's address $address on lan1" has_address lan1 "${address%/*}"
wait_for 20 "the default policy's primary is lan1" field_is lan1 path_field default primary
[ "$(path_field default 'gateways[0]')" = "$gateway" ] ||
	fail "netpath's gateway $(path_field default 'gateways[0]') is not nmcli's $gateway"

say "the NetworkManager dialect: scripts ran with NetworkManager's arguments, and chrony's worked"
# NetworkManager writes IP4_ADDRESS_N as "ADDRESS/PREFIX GATEWAY".
wait_for 30 "our dispatcher script ran: lan1 up, IP4_ADDRESS_0=$address $gateway" \
	grep -q "^lan1 up $address $gateway lan1\$" /var/log/netpath/nm-dialect
wait_for 30 "chronyd's source is online (chrony's 20-chrony-onoffline ran chronyc onoffline)" chrony_online 1

say "NetworkManager takes the connection down: down, and chrony's source goes offline"
nmcli connection down lan1 >/dev/null
wait_for 30 "nmcli says lan1 is disconnected" bash -c "nmcli -g GENERAL.STATE device show lan1 | grep -q '^30'"
wait_for 30 "our dispatcher script ran: lan1 down" grep -q "^lan1 down" /var/log/netpath/nm-dialect
[ "$(interface_field lan1 'addresses | map(select(.address | contains("."))) | length')" = 0 ] ||
	fail "netpath still shows an IPv4 address on lan1: $(interface_field lan1 addresses)"
wait_for 30 "chronyd's source is offline again" chrony_online 0

nmcli connection delete lan1 >/dev/null
