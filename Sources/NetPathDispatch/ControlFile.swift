// SPDX-License-Identifier: Apache-2.0

import NetPathCore
#if canImport(Glibc)
    import SystemPackage
    import Glibc
#endif

/// Reads and writes the small files of /proc and the cgroup filesystem with plain system calls.
enum ControlFile {
    /// A small file's text; `nil` if it cannot be read.
    static func read(_ path: String, limit: Int = 1 << 20) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to an existing control file in one `write`, as cgroup files want it.
    static func write(_ text: String, to path: String) throws(SystemCallError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw SystemCallError(operation: "write \(text) to", path: path, errno: written < 0 ? errno : EIO)
        }
    }
}
