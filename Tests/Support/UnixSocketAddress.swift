// SPDX-License-Identifier: Apache-2.0

import Glibc

/// Calls `body` with `path` as a Unix socket address, for `bind` and `connect` in tests.
///
/// ```swift
/// let bound = withUnixSocketAddress(path) { bind(fd, $0, $1) }
/// ```
public func withUnixSocketAddress<Result>(
    _ path: String,
    _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    // Test sockets live in the temporary directory: always shorter than sun_path (108 bytes).
    precondition(path.utf8.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}
