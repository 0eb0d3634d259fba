// SPDX-License-Identifier: Apache-2.0

import Glibc

/// The machine's groups, as NSS gives them (`/etc/group`, LDAP, …): what `control_group` names.
///
/// ```swift
/// GroupDatabase.id(named: "netpath")   // 998, or nil when there is no such group
/// ```
package enum GroupDatabase {
    /// The id of the group called `name`, or `nil` when there is none (or the lookup failed).
    package static func id(named name: String) -> UInt32? {
        var size = max(Int(sysconf(Int32(_SC_GETGR_R_SIZE_MAX))), 1024)
        // A group with many members needs a larger buffer: ERANGE says so. 1 MiB is far more than
        // any real group, and keeps a broken NSS module from asking for ever more.
        while size <= 1 << 20 {
            var group = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: size)
            let code = getgrnam_r(name, &group, &buffer, size, &result)
            if code == ERANGE {
                size *= 2
                continue
            }
            guard code == 0, let result else { return nil }
            return UInt32(result.pointee.gr_gid)
        }
        return nil
    }
}
