// SPDX-License-Identifier: Apache-2.0

import SystemPackage

/// A system call failed: what was being done, on which file (when one), and the errno, kept raw.
///
/// One type for hook runs (pipes, spawn, `waitid`), control files (cgroup, `/proc`) and the
/// agent's listening sockets: they fail the same way.
package struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done: `"pipe2 (stdout)"`, `"mkdir"`, `"write +pids to"`.
    package var operation: String
    /// The file it was done to, when one.
    package var path: String?
    package var errno: Int32

    package init(operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `OPERATION[ PATH]: REASON (errno N)`.
    package var description: String {
        "\(operation)\(path.map { " \($0)" } ?? ""): \(Errno(rawValue: errno).description) (errno \(errno))"
    }
}
