#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The host phase of `make test` (Tests/Host/README.md): boots the cached Debian 12 guest under
# qemu, installs the .deb this tree built, runs the scenarios of Tests/Host/scenarios in it and
# reports each one's verdict and cost. Exits 1 when a scenario failed, printing its output and the
# guest's journal since it began.
#
#   Tests/Host/run.sh DEB UPGRADE_DEB
#
# NETPATH_HOST_ONLY=PART runs only the scenarios whose name contains PART;
# NETPATH_HOST_ACCEL=kvm|tcg skips the KVM check; NETPATH_HOST_DIR moves the cache (.build/host).
set -euo pipefail

deb=${1:?usage: run.sh DEB UPGRADE_DEB}
upgrade=${2:?usage: run.sh DEB UPGRADE_DEB}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${NETPATH_HOST_DIR:-$top/.build/host}
phase_start=$SECONDS

# The guest is rebuilt when what it is built from changes: its recipe and the unit baked into it.
key=$(cat "$here/build-guest.sh" "$here/guest/netpath-host-test.service" | sha256sum | cut -c1-12)
guest="$dir/guest-$key"
if [ ! -f "$guest/rootfs.img" ]; then
	echo "host phase: building the Debian 12 guest in $guest (once; later runs reuse it)"
	build_start=$SECONDS
	rm -rf "$dir"/guest-*
	sh "$here/build-guest.sh" "$guest.tmp" >"$dir.build-guest.log" 2>&1 || {
		tail -n 40 "$dir.build-guest.log" >&2
		echo "host phase: building the guest failed; the whole log is $dir.build-guest.log" >&2
		exit 1
	}
	mv "$guest.tmp" "$guest"
	echo "host phase: guest built in $((SECONDS - build_start)) s"
fi

# Every run starts from the pristine image: the guest writes to an overlay that is thrown away.
run="$dir/run"
rm -rf "$run"
mkdir -p "$run/share/scenarios" "$run/share/results"
qemu-img create -q -f qcow2 -F raw -b "$guest/rootfs.img" "$run/overlay.qcow2"
cp "$deb" "$run/share/netpath.deb"
cp "$upgrade" "$run/share/netpath-upgrade.deb"
cp "$here/guest/run-scenarios.sh" "$here/guest/lib.sh" "$run/share/"
cp "$here"/scenarios/*.sh "$run/share/scenarios/"
printf '%s' "${NETPATH_HOST_ONLY:-}" >"$run/share/only"

boot() { # ACCEL CPU SECONDS: boots the guest; returns when it powers off or SECONDS pass
	local accel=$1 cpu=$2 limit=$3
	: >"$run/console.log"
	qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 2048 -smp 2 \
		-display none -monitor none -serial "file:$run/console.log" -nic none -no-reboot \
		-kernel "$guest/vmlinuz" -initrd "$guest/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 systemd.show_status=0" \
		-drive "file=$run/overlay.qcow2,if=virtio,format=qcow2" \
		-virtfs "local,path=$run/share,mount_tag=host,security_model=passthrough" &
	qemu=$!
	local deadline=$((SECONDS + limit))
	while kill -0 "$qemu" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			kill -9 "$qemu" 2>/dev/null
			wait "$qemu" 2>/dev/null || true
			return 1
		fi
		sleep 1
	done
	wait "$qemu" 2>/dev/null || true
}

# KVM where it really works: the device exists on these machines but the guest kernel stalls
# early, so a KVM boot must print the kernel's hand-over to init within a few seconds or the
# phase falls back to software emulation (which boots to multi-user in about 75 s).
accel=${NETPATH_HOST_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		# In a subshell whose output goes nowhere: where KVM is broken qemu aborts, and bash would
		# report the signal.
		(qemu-system-x86_64 -accel kvm -cpu host -m 512 -display none -monitor none \
			-serial "file:$run/kvm-check.log" -nic none -no-reboot \
			-kernel "$guest/vmlinuz" -initrd "$guest/initrd.img" -append "console=ttyS0 panic=-1" || true) \
			>/dev/null 2>&1 &
		check=$!
		for _ in $(seq 1 15); do
			grep -q "Run /init as init process" "$run/kvm-check.log" 2>/dev/null && { accel=kvm; break; }
			kill -0 "$check" 2>/dev/null || break
			sleep 1
		done
		kill -9 "$check" 2>/dev/null || true
		wait "$check" 2>/dev/null || true
	fi
fi
cpu=max
[ "$accel" = kvm ] && cpu=host

echo "host phase: booting the guest ($accel)"
boot_start=$SECONDS
limit=${NETPATH_HOST_TIMEOUT:-900}
if ! boot "$accel" "$cpu" "$limit"; then
	echo "host phase: the guest did not power off within $limit s; its console ends:" >&2
	tail -n 60 "$run/console.log" >&2
	exit 1
fi
# A scenario that tests a boot asks for one (guest/run-scenarios.sh): boot again on the same disk.
boots=1
while [ -f "$run/share/results/reboot" ] && [ "$boots" -lt 4 ]; do
	boots=$((boots + 1))
	echo "host phase: booting the guest again for $(cat "$run/share/results/reboot")"
	if ! boot "$accel" "$cpu" "$limit"; then
		echo "host phase: the guest did not power off within $limit s of boot $boots; its console ends:" >&2
		tail -n 60 "$run/console.log" >&2
		exit 1
	fi
done
summary="$run/share/results/summary"
if ! grep -qx END "$summary" 2>/dev/null; then
	echo "host phase: the guest stopped before its scenarios finished; its console ends:" >&2
	tail -n 60 "$run/console.log" >&2
	exit 1
fi

results="$run/share/results"
echo "host phase: guest $(head -n 1 "$results/versions"), $(sed -n 2p "$results/versions")"
failed=0
passed=0
scenario_seconds=0
while read -r verdict name seconds; do
	[ "$verdict" = END ] && break
	printf 'host phase: %-4s %-28s %7s s\n' "$verdict" "$name" "$seconds"
	if [ "$verdict" = PASS ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "----- $name: output" >&2
		cat "$results/$name.log" >&2
		echo "----- $name: the guest's journal since it began (last 150 lines)" >&2
		tail -n 150 "$results/$name.journal" >&2
	fi
done <"$summary"
for extra in "$results"/*.report; do
	[ -f "$extra" ] && cat "$extra"
done
echo "host phase: boot and scenarios $((SECONDS - boot_start)) s, whole phase $((SECONDS - phase_start)) s"
echo "host-phase: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
