# SPDX-License-Identifier: Apache-2.0
# The package under systemd: install, READY, reload (good and bad), hooks in the delegated
# cgroup with their leftovers ended, the watchdog, and a stop that lets a running hook finish.
set -euo pipefail
. ../lib.sh

say "a minimal Debian: no procps, so no /bin/kill (what ExecReload= used to need)"
[ ! -e /bin/kill ] && [ ! -e /usr/bin/kill ] || fail "the guest has a kill binary; it must be as minimal as Debian's minbase"

say "install: dpkg -i starts the unit, and it is active only once READY=1 came"
dpkg -i "$HOST/netpath.deb"
ensure_installed
[ "$(unit_property netpathd.service Type)" = notify ] || fail "Type is $(unit_property netpathd.service Type)"
[ "$(unit_property netpathd.service SubState)" = running ] || fail "SubState $(unit_property netpathd.service SubState)"
[ "$(systemctl is-enabled netpathd.service)" = enabled ] || fail "not enabled after a first install"
getent passwd netpath-probe >/dev/null || fail "the package did not create the user netpath-probe"
[ -S /run/netpath/netpathd.sock ] || fail "no control socket"

say "systemctl reload: a valid change takes effect, and systemctl reports success"
cp /root/netpath.toml.shipped /etc/netpath/netpath.toml
cat >>/etc/netpath/netpath.toml <<'EOF'

[[policy]]
name = "reloaded"
EOF
systemctl reload netpathd.service || fail "systemctl reload failed on a valid configuration"
[ "$(status_json | jq -r '[.paths[].policy] | join(",")')" = default,reloaded ] ||
	fail "the reloaded policy is not in force: $(status_json | jq -c '[.paths[].policy]')"

say "the control: the old ExecReload=/bin/kill put back, systemctl reload fails here (no procps)"
mkdir -p /run/systemd/system/netpathd.service.d
printf '[Service]\nExecReload=\nExecReload=/bin/kill -HUP $MAINPID\n' >/run/systemd/system/netpathd.service.d/reload.conf
systemctl daemon-reload
if systemctl reload netpathd.service 2>/dev/null; then
	fail "systemctl reload worked with ExecReload=/bin/kill on a guest without it, so the check above proves nothing"
fi
journalctl -u netpathd.service -n 20 --no-pager | grep "/bin/kill" >/dev/null ||
	fail "the journal does not say why the old reload failed: $(journalctl -u netpathd.service -n 20 --no-pager)"
rm -r /run/systemd/system/netpathd.service.d
systemctl daemon-reload
[ "$(unit_property netpathd.service ActiveState)" = active ] || fail "the unit is not active after the failed control reload"

say "systemctl reload of a broken file: systemctl fails, and the configuration in force stays"
pid=$(unit_property netpathd.service MainPID)
echo 'this is = = not toml' >>/etc/netpath/netpath.toml
if systemctl reload netpathd.service 2>/root/reload.err; then
	fail "systemctl reload succeeded on a broken configuration"
fi
journalctl -u netpathd.service -n 20 --no-pager | grep "netpath.toml:" >/dev/null ||
	fail "the journal does not name the broken file's line: $(journalctl -u netpathd.service -n 20 --no-pager)"
[ "$(unit_property netpathd.service ActiveState)" = active ] || fail "the unit is not active after a rejected reload"
[ "$(unit_property netpathd.service MainPID)" = "$pid" ] || fail "the agent restarted on a rejected reload"
[ "$(status_json | jq -r '[.paths[].policy] | join(",")')" = default,reloaded ] ||
	fail "the old configuration is not in force after a rejected reload"
cp /root/netpath.toml.shipped /etc/netpath/netpath.toml
systemctl reload netpathd.service

say "hooks: born in the unit's delegated cgroup; what a hook leaves behind (setsid) is ended"
cat >/etc/netpath/hooks.d/20-cgroup <<'EOF'
#!/bin/sh
[ "$NETPATH_INTERFACE" = probe0 ] && [ "$NETPATH_EVENT" = added ] || exit 0
cat /proc/self/cgroup >/var/log/netpath/hook-cgroup
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo $! >/var/log/netpath/hook-leftover
EOF
chmod 0755 /etc/netpath/hooks.d/20-cgroup
ip link add probe0 type dummy
wait_for 20 "the hook ran for probe0" test -s /var/log/netpath/hook-leftover
cgroup=$(sed -n 's/^0:://p' /var/log/netpath/hook-cgroup)
# The agent moves itself into the leaf "agent" of its delegated cgroup, where hooks are born.
[ "$cgroup" = /system.slice/netpathd.service/agent ] ||
	fail "the hook ran in cgroup '$cgroup', not in the unit's delegated /system.slice/netpathd.service/agent"
leftover=$(cat /var/log/netpath/hook-leftover)
wait_for 15 "the setsid leftover $leftover ended after its hook exited" bash -c "! kill -0 $leftover"
ip link del probe0
rm /etc/netpath/hooks.d/20-cgroup

say "the watchdog: a stopped agent is killed and restarted"
mkdir -p /run/systemd/system/netpathd.service.d
printf '[Service]\nWatchdogSec=6s\n' >/run/systemd/system/netpathd.service.d/watchdog.conf
systemctl daemon-reload
systemctl restart netpathd.service
wait_for 60 "netpathd active with a 6 s watchdog" field_is active unit_property netpathd.service ActiveState
restarts=$(unit_property netpathd.service NRestarts)
pid=$(unit_property netpathd.service MainPID)
kill -STOP "$pid"
wait_for 60 "systemd restarted the stopped agent" \
	bash -c "[ \$(systemctl show -P NRestarts netpathd.service) -gt $restarts ]"
wait_for 60 "netpathd active again after the watchdog" field_is active unit_property netpathd.service ActiveState
[ "$(unit_property netpathd.service MainPID)" != "$pid" ] || fail "the same process is still the main PID"
journalctl -u netpathd.service -o json --no-pager | jq -r .MESSAGE | grep "Watchdog timeout" >/dev/null ||
	fail "systemd did not log a watchdog timeout"
rm -r /run/systemd/system/netpathd.service.d
systemctl daemon-reload
systemctl restart netpathd.service
wait_for 60 "netpathd active" field_is active unit_property netpathd.service ActiveState

say "systemctl stop lets a running hook finish"
cat >/etc/netpath/hooks.d/30-slow <<'EOF'
#!/bin/sh
[ "$NETPATH_INTERFACE" = slow0 ] && [ "$NETPATH_EVENT" = added ] || exit 0
echo started >/var/log/netpath/slow-hook
sleep 3
echo finished >>/var/log/netpath/slow-hook
EOF
chmod 0755 /etc/netpath/hooks.d/30-slow
ip link add slow0 type dummy
wait_for 20 "the slow hook started" grep -q started /var/log/netpath/slow-hook
systemctl stop netpathd.service
grep -q finished /var/log/netpath/slow-hook || fail "systemctl stop returned before the running hook finished"
[ "$(unit_property netpathd.service Result)" = success ] || fail "stop ended with $(unit_property netpathd.service Result)"
ip link del slow0
rm /etc/netpath/hooks.d/30-slow /var/log/netpath/slow-hook
systemctl start netpathd.service
wait_for 60 "netpathd active" field_is active unit_property netpathd.service ActiveState
