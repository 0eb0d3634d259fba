# SPDX-License-Identifier: Apache-2.0
# Real Wi-Fi: two mac80211_hwsim radios, hostapd with WPA2 in a namespace of its own (and
# dnsmasq for DHCP there), wpa_supplicant as the station and systemd-networkd as its DHCP client.
# The station is `wifi`; association and its loss are carrier events; a policy that prefers wifi
# picks it over a link forced to `cellular` that has the better route metric.
set -euo pipefail
. ../lib.sh
ensure_installed

cat >/root/wifi.toml <<'EOF'
[[interface]]
match = "lte0"
type = "cellular"

[[policy]]
name = "uplink"
metered = "allow"
prefer = ["wifi", "cellular"]
EOF
use_config /root/wifi.toml
install_event_hook

say "two radios; the second moves into the access point's namespace"
modprobe mac80211_hwsim radios=2
on_exit rmmod mac80211_hwsim
wait_for 20 "hwsim's wlan0 and wlan1" test -e /sys/class/net/wlan0 -a -e /sys/class/net/wlan1
new_namespace ap
iw phy "$(cat /sys/class/net/wlan1/phy80211/name)" set netns name ap
ip -n ap link set lo up
ip -n ap link set wlan1 up
ip -n ap addr add 192.0.2.1/24 dev wlan1
cat >/run/hostapd.conf <<'EOF'
interface=wlan1
driver=nl80211
ssid=netpath-test
hw_mode=g
channel=6
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=netpath-passphrase
EOF
start_ap() {
	ip netns exec ap hostapd -B -P /run/hostapd.pid /run/hostapd.conf >/dev/null
}
start_ap
on_exit 'kill $(cat /run/hostapd.pid)'
ip netns exec ap dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --port=0 --interface=wlan1 \
	--bind-interfaces --dhcp-range=192.0.2.50,192.0.2.99,1h --dhcp-option=option:router,192.0.2.1 \
	--pid-file=/run/dnsmasq-ap.pid --dhcp-leasefile=/run/dnsmasq-ap.leases

say "the other uplink: a veth forced to cellular, with a better metric than Wi-Fi's DHCP route"
new_namespace cell
ip link add lte0 type veth peer name lte0-peer netns cell
ip -n cell link set lte0-peer up
ip -n cell addr add 198.51.100.1/24 dev lte0-peer
ip link set lte0 up
ip addr add 198.51.100.2/24 dev lte0
ip route add default via 198.51.100.1 dev lte0 metric 50
on_exit ip link del lte0

say "the station: wpa_supplicant associates, networkd takes a lease"
mkdir -p /run/systemd/network
printf '[Match]\nName=wlan0\n\n[Network]\nDHCP=ipv4\n' >/run/systemd/network/50-wlan0.network
on_exit systemctl stop systemd-networkd.service systemd-networkd.socket
on_exit rm -f /run/systemd/network/50-wlan0.network
systemctl restart systemd-networkd.service
cat >/run/wpa.conf <<'EOF'
network={
	ssid="netpath-test"
	psk="netpath-passphrase"
}
EOF
wpa_supplicant -B -i wlan0 -c /run/wpa.conf -P /run/wpa.pid >/dev/null
on_exit 'kill $(cat /run/wpa.pid)'
wait_for 60 "iw says wlan0 is associated" bash -c "iw dev wlan0 link | grep -q 'Connected to'"
wait_for 60 "networkctl says wlan0 is routable" bash -c "networkctl status wlan0 | grep -q 'State: routable'"

say "netpath calls it wifi, like the kernel (nl80211) does"
iw dev wlan0 info | grep "type managed" >/dev/null || fail "iw does not show wlan0 as a managed station"
# What made the old classifier say `other`: hwsim's device sits under devices/virtual. Without it
# this scenario could not see that defect put back.
case $(readlink -f /sys/class/net/wlan0) in
/sys/devices/virtual/*) ;;
*) fail "wlan0 is not under devices/virtual in sysfs ($(readlink -f /sys/class/net/wlan0)): the old defect's case is not exercised" ;;
esac
[ "$(interface_field wlan0 type)" = wifi ] ||
	fail "wlan0 is $(interface_field wlan0 type), classified by $(interface_field wlan0 classified_by)"
[ "$(interface_field lte0 type)" = cellular ] || fail "lte0 is $(interface_field lte0 type)"
wait_for 20 "the hook saw carrier-up for wlan0 as wifi" hook_saw carrier-up wlan0 wifi
wait_for 30 "policy uplink's primary is wlan0" field_is wlan0 path_field uplink primary
lease=$(networkctl status wlan0 | sed -n 's/^ *Address: \([0-9.]*\) (DHCP4.*/\1/p')
[ -n "$lease" ] && interface_field wlan0 'addresses[].address' | grep -x "$lease" >/dev/null ||
	fail "netpath's addresses for wlan0 ($(interface_field wlan0 'addresses[].address' | tr '\n' ' ')) lack networkd's lease $lease"

say "the access point goes away: carrier-down, and the path moves to the cellular link"
kill "$(cat /run/hostapd.pid)"
wait_for 60 "iw says wlan0 is not connected" bash -c "iw dev wlan0 link | grep -q 'Not connected'"
wait_for 30 "the hook saw carrier-down for wlan0" hook_saw carrier-down wlan0 wifi
wait_for 30 "policy uplink's primary is lte0" field_is lte0 path_field uplink primary

say "it comes back: carrier-up, a lease again, and wifi is primary again"
: >"$HOOK_LOG"
start_ap
wait_for 60 "iw says wlan0 is associated again" bash -c "iw dev wlan0 link | grep -q 'Connected to'"
wait_for 30 "the hook saw carrier-up for wlan0 again" hook_saw carrier-up wlan0 wifi
wait_for 60 "policy uplink's primary is wlan0 again" field_is wlan0 path_field uplink primary

