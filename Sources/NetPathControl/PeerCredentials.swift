// SPDX-License-Identifier: Apache-2.0

import Glibc

/// Who is at the other end of a connected Unix socket, as the kernel recorded it (`SO_PEERCRED`).
///
/// For a client's socket the kernel records the credentials of the process that called
/// `listen()`; for an accepted socket, those of the process that called `connect()`. Neither
/// side can forge them.
package struct PeerCredentials: Hashable, Sendable {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32

    /// The credentials of `socket`'s peer, or `nil` when the kernel has none to give.
    package init?(socket: Int32) {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } is hidden behind _GNU_SOURCE in
        // Glibc's module: read it as the three 32-bit words it is on every Linux architecture.
        var credentials: (Int32, UInt32, UInt32) = (0, UInt32.max, UInt32.max)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        (pid, uid, gid) = credentials
    }
}
