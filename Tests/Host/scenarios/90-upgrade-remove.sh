# SPDX-License-Identifier: Apache-2.0
# The package's life: an upgrade keeps an edited /etc/netpath/netpath.toml and restarts the
# agent; remove leaves the configuration (a conffile) and the user; purge removes the
# configuration and logs but, as Debian policy says of system users, not netpath-probe.
set -euo pipefail
. ../lib.sh
ensure_installed
reset_config

say "upgrade: the edited configuration stays, the agent runs the new version"
printf '\n# edited by the admin\n[[policy]]\nname = "edited"\n' >>/etc/netpath/netpath.toml
systemctl reload netpathd.service
edited=$(sha256sum </etc/netpath/netpath.toml)
pid=$(unit_property netpathd.service MainPID)
old=$(dpkg-query -W -f '${Version}' netpath)
dpkg -i "$HOST/netpath-upgrade.deb" </dev/null
new=$(dpkg-query -W -f '${Version}' netpath)
dpkg --compare-versions "$new" gt "$old" || fail "the upgrade installed $new over $old"
[ "$(sha256sum </etc/netpath/netpath.toml)" = "$edited" ] || fail "the upgrade replaced the edited netpath.toml"
wait_for 60 "netpathd active after the upgrade" field_is active unit_property netpathd.service ActiveState
[ "$(unit_property netpathd.service MainPID)" != "$pid" ] || fail "the upgrade did not restart the agent"
[ "$(status_json | jq -r '[.paths[].policy] | join(",")')" = default,edited ] ||
	fail "the upgraded agent does not run the edited configuration"

say "remove: the agent stops, the binaries go, the configuration and the user stay"
dpkg -r netpath
[ "$(unit_property netpathd.service ActiveState)" != active ] || fail "netpathd still runs after remove"
[ ! -e /usr/sbin/netpathd ] && [ ! -e /usr/bin/netpathctl ] || fail "binaries left after remove"
[ -f /etc/netpath/netpath.toml ] || fail "remove took the configuration (a conffile must stay until purge)"
[ "$(dpkg-query -W -f '${Status}' netpath)" = "deinstall ok config-files" ] ||
	fail "dpkg says $(dpkg-query -W -f '${Status}' netpath) after remove"

say "purge: configuration and logs go; the system user stays"
dpkg -P netpath
[ ! -e /etc/netpath ] || fail "/etc/netpath left after purge: $(ls -la /etc/netpath)"
[ ! -e /var/log/netpath ] || fail "/var/log/netpath left after purge"
getent passwd netpath-probe >/dev/null || fail "purge removed the system user (Debian policy 9.2.2 keeps it)"
! dpkg-query -W netpath >/dev/null 2>&1 || [ -z "$(dpkg-query -W -f '${Status}' netpath | grep -v not-installed)" ] ||
	fail "dpkg still knows netpath after purge"
[ "$(systemctl is-enabled netpathd.service 2>/dev/null || true)" != enabled ] || fail "the unit is still enabled after purge"
