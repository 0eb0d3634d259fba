// SPDX-License-Identifier: Apache-2.0

import CLinux
import Glibc

/// Moves the calling thread into a network namespace: the one place netpath calls `setns(2)`.
package enum NetworkNamespaceEntry {
    /// Enters `namespace`: a name under `/run/netns` (as `ip netns` makes them) or a path.
    ///
    /// `setns(CLONE_NEWNET)` moves only the calling thread, so call it on a thread of your own
    /// (``OSThread``) that runs nothing else afterwards.
    package static func enter(_ namespace: String) throws(NetlinkError) {
        let path = namespace.hasPrefix("/") ? namespace : "/run/netns/\(namespace)"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw NetlinkError(.namespace, rawValue: errno, context: "open \(path)") }
        defer { close(fd) }
        guard np_setns_net(fd) == 0 else {
            throw NetlinkError(.namespace, rawValue: errno, context: "setns \(path)")
        }
    }
}
