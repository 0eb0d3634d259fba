// SPDX-License-Identifier: Apache-2.0

import SystemPackage

/// A system call failed: what was being done, on which file (when one), and the errno, kept raw.
///
/// One type for hook runs (pipes, spawn, `waitid`) and control files (cgroup, `/proc`): they
/// fail the same way.
struct SystemCallError: Error, Equatable, CustomStringConvertible {
    /// What was being done: `"pipe2 (stdout)"`, `"mkdir"`, `"write +pids to"`.
    var operation: String
    /// The file it was done to, when one.
    var path: String?
    var errno: Int32

    init(operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `OPERATION[ PATH]: REASON (errno N)`.
    var description: String {
        "\(operation)\(path.map { " \($0)" } ?? ""): \(Errno(rawValue: errno).description) (errno \(errno))"
    }
}
