// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore
import SystemPackage

/// Reads a trace from disk for `netpathctl simulate`: the bytes as they are, so that a file that
/// is not UTF-8 gets a line and column like any other mistake.
package enum TraceFile {
    /// Why a trace could not be used.
    package enum Failure: Error, Sendable, CustomStringConvertible {
        /// The file could not be read at all.
        case unreadable(path: String, reason: String)
        /// The file was read and is malformed.
        case invalid(Trace.FormatError)

        /// One line: `FILE: error: cannot read the trace: …` or `FILE:LINE: error: …`.
        package var description: String {
            switch self {
            case .unreadable(let path, let reason):
                return "\(path): error: cannot read the trace: \(reason)".escapingControlCharacters
            case .invalid(let error): return error.description
            }
        }
    }

    /// Reads and parses the trace at `path`.
    package static func load(path: String) -> Result<Trace.Contents, Failure> {
        read(path).flatMap { bytes in Trace.parse(bytes, file: path).mapError { .invalid($0) } }
    }

    /// The most a trace may hold.
    static let sizeLimit = 1 << 30

    private static func read(_ path: String) -> Result<[UInt8], Failure> {
        let unreadable = { (reason: String) in Result<[UInt8], Failure>.failure(.unreadable(path: path, reason: reason))
        }
        do throws(Errno) {
            let file = try FileDescriptor.open(reading: path)
            defer { try? file.close() }
            var info = stat()
            guard fstat(file.rawValue, &info) == 0 else { return unreadable(Errno(rawValue: errno).description) }
            if info.st_mode & S_IFMT == S_IFDIR { return unreadable("it is a directory") }
            // Read to the end rather than to st_size: a trace may come from a pipe (`--trace /dev/stdin`).
            let bytes = try file.readToEnd(limit: sizeLimit)
            guard bytes.count <= sizeLimit else { return unreadable("larger than \(sizeLimit >> 20) MiB") }
            return .success(bytes)
        } catch {
            return unreadable(error.description)
        }
    }
}
