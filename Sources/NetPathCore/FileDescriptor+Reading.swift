// SPDX-License-Identifier: Apache-2.0

import SystemPackage

extension FileDescriptor {
    /// Opens `path` read-only, close-on-exec, with `options` besides; the error typed.
    package static func open(reading path: String, options: OpenOptions = []) throws(Errno) -> FileDescriptor {
        do {
            return try open(path, .readOnly, options: options.union(.closeOnExec))
        } catch let error as Errno {
            throw error
        } catch {
            throw Errno.ioError
        }
    }

    /// Reads from the current offset to the end of the file, or until more than `limit` bytes
    /// have come (then `limit + 1` are returned, so the caller can tell "too large" from "exactly
    /// the limit"). Works for files whose size `stat` does not tell: sysfs attributes (4096
    /// whatever they hold), pipes (`--trace /dev/stdin`). Interrupted reads are retried.
    ///
    /// The one read loop netpath has: configuration files, traces, sysfs and `resolv.conf`.
    package func readToEnd(limit: Int) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Swift.min(limit + 1, 1 << 16))
        while bytes.count <= limit {
            let wanted = Swift.min(chunk.count, limit + 1 - bytes.count)
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { buffer in
                    try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]))
                }
            } catch let error as Errno {
                throw error
            } catch {
                throw Errno.ioError
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
