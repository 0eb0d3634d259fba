// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore
import SystemPackage

/// Reads small pseudo-files (sysfs attributes, `resolv.conf`) with plain syscalls.
///
/// sysfs attributes report a size of 4096 whatever they hold and may vanish between `open` and
/// `read` when a link is deleted, so this reads up to a bound and treats every failure as "no
/// file" instead of throwing: callers fall back to the facts they already have.
enum SmallFile {
    /// The bytes of the file at `path`, at most `limit` of them; `nil` when it cannot be read.
    static func read(_ path: String, limit: Int = 64 * 1024) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(reading: path) else { return nil }
        defer { try? file.close() }
        return try? Array(file.readToEnd(limit: limit).prefix(limit))
    }

    /// The target of the symbolic link at `path`, as stored (usually relative); `nil` if `path` is
    /// not a link or cannot be read.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let n = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
        guard n > 0, n < buffer.count else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether anything (a file, directory or link, even a dangling one) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether `path` is a directory (following links).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The canonical absolute path of `path`, or `nil` if it does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
