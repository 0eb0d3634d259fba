// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathControl

/// The process at the other end of a control connection, as the kernel vouches for it
/// (`SO_PEERCRED`: its credentials when it connected).
///
/// Kept with each connection for as long as it is open, so that every decision about a request
/// (who may reload, who may take a reserved slot) asks the same value. Who may read is the
/// socket file's permissions' to decide, at connect (``ControlServer`` says why).
struct ControlPeer: Hashable, Sendable, CustomStringConvertible {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the process connected on `fd`; `nil` when the kernel does not say.
    init?(socket fd: Int32) {
        guard let credentials = PeerCredentials(socket: fd) else { return nil }
        self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// Root, or the user the agent runs as: a peer that could stop or replace the agent anyway.
    /// Only these may take the connection slots kept in reserve (``ControlLimits``).
    var isPrivileged: Bool { uid == 0 || uid == geteuid() }

    /// Whether this peer may ask for a reload.
    var mayReload: Bool { uid == 0 }

    var description: String { "uid \(uid), pid \(pid)" }
}
