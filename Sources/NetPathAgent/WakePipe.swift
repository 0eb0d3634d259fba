// SPDX-License-Identifier: Apache-2.0

import Glibc

/// A self-pipe that wakes a thread blocked in `poll()`: write a byte to wake it, drain to reset.
///
/// A pipe rather than an eventfd because Swift's Glibc module does not export `eventfd(2)`, and
/// the agent has no business importing the netlink shim for it.
final class WakePipe: Sendable {
    /// Poll this for `POLLIN`.
    let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        for fd in fds where fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

/// `accept(2)` with the new socket made close-on-exec and, optionally, non-blocking (what
/// `accept4` does, which Swift's Glibc module does not export).
func acceptClient(_ listener: Int32, nonBlocking: Bool) -> Int32 {
    let fd = accept(listener, nil, nil)
    guard fd >= 0 else { return fd }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    return fd
}
