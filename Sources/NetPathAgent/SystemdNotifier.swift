// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Talks the systemd notification protocol (`sd_notify(3)`) without linking libsystemd: one
/// datagram per message to the Unix socket named by `NOTIFY_SOCKET`.
///
/// With no `NOTIFY_SOCKET` (not started by systemd), every call does nothing.
package struct SystemdNotifier: Sendable {
    /// The socket path; a leading `@` names an abstract socket.
    package let socketPath: String?

    /// Reads `NOTIFY_SOCKET` from `environment`.
    package init(environment: [String: String]) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
    }

    /// Whether a service manager is listening.
    package var isEnabled: Bool { socketPath != nil }

    /// Sends `KEY=VALUE` lines, e.g. `["READY=1", "STATUS=…"]`. Errors are returned, not thrown:
    /// a notification that cannot be sent must never stop the agent.
    @discardableResult
    package func notify(_ lines: [String]) -> Int32 {
        guard let socketPath else { return 0 }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let message = Array(lines.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), sa, length)
            }
        }
        return sent < 0 ? errno : 0
    }
}
