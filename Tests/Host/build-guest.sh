#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Builds the Debian 12 guest the host phase boots (Tests/Host/README.md):
#
#   sh Tests/Host/build-guest.sh OUT_DIR
#
# writes OUT_DIR/rootfs.img (ext4, booted read-only as a qcow2 overlay's backing file),
# OUT_DIR/vmlinuz and OUT_DIR/initrd.img, all from Debian's packages: debootstrap's minbase,
# Debian's own kernel with its modules, systemd as PID 1, and only what the scenarios need.
# The guest gets no network device from qemu, so nothing it does can leave it.
set -eu

out=${1:?usage: build-guest.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mirror=${NETPATH_GUEST_MIRROR:-}
if [ -z "$mirror" ]; then
	# The mirror this machine's own apt uses: the guest's packages come from where the host's do.
	mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
fi
[ -n "$mirror" ] || { echo "build-guest: no Debian mirror found in /etc/apt (set NETPATH_GUEST_MIRROR)" >&2; exit 1; }

# What each package is for:
# - systemd-sysv udev kmod dbus: systemd as PID 1 with udev, modules and a bus (NetworkManager's);
# - linux-image-amd64: Debian's 6.1 kernel with mac80211_hwsim, dummy, vlan, bond, wireguard;
# - iproute2 iw hostapd wpasupplicant dnsmasq-base: links, Wi-Fi (an AP and a station), DHCP;
# - network-manager: the manager people run (1.42, off until its scenario starts it), and
#   libpam-systemd: the logind its polkitd needs (a virtual package debootstrap cannot pick);
# - chrony: its NetworkManager dispatcher script is a real client of the dialect directories;
# - jq: the scenarios read `netpathctl --json`, `networkctl --json` and the journal's JSON;
# - libnl-3-200 … libseccomp2: the .deb's run-time dependencies, since the guest has no mirror.
packages=systemd-sysv,udev,kmod,dbus,linux-image-amd64,iproute2,iw,hostapd,wpasupplicant,dnsmasq-base
packages=$packages,network-manager,libpam-systemd,chrony,jq,libnl-3-200,libnl-route-3-200,libnl-genl-3-200,libcurl4,libseccomp2

root="$out/root"
rm -rf "$root" "$out/rootfs.img"
mkdir -p "$out"
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror"

# The initramfs must find the root disk (virtio) before the modules on it are reachable.
printf '%s\n' virtio_pci virtio_blk >>"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all >/dev/null

# The guest's own configuration: a name, a root that needs no password on the serial console,
# the shared folder, and the unit that runs the scenarios and powers off.
echo netpath-guest >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 netpath-guest\n' >"$root/etc/hosts"
chroot "$root" passwd -d root >/dev/null
printf 'host /host 9p trans=virtio,version=9p2000.L,msize=262144,nofail 0 0\n' >>"$root/etc/fstab"
mkdir -p "$root/host"
install -m 0644 "$here/guest/netpath-host-test.service" "$root/etc/systemd/system/"
chroot "$root" systemctl enable netpath-host-test.service >/dev/null 2>&1
# The managers start only in their own scenarios; chrony has no server to reach.
chroot "$root" systemctl disable NetworkManager.service chrony.service wpa_supplicant.service >/dev/null 2>&1 || true
chroot "$root" systemctl mask NetworkManager-wait-online.service systemd-networkd-wait-online.service \
	apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1 || true
# Boot faster: no getty waits on a console nobody types into, no time-outs for absent devices.
chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service >/dev/null 2>&1 || true

cp "$root/boot/vmlinuz-"* "$out/vmlinuz"
cp "$root/boot/initrd.img-"* "$out/initrd.img"
chmod 0644 "$out/vmlinuz" "$out/initrd.img"
# The image is made from the tree directly (no loop device), with room for the scenarios' files.
size_mb=$(($(du -sm "$root" | cut -f1) + 768))
mkfs.ext4 -q -L netpath-guest -d "$root" "$out/rootfs.img" "${size_mb}M"
rm -rf "$root"
