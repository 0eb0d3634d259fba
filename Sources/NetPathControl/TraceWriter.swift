// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import Glibc
import NetPathCore
import SystemPackage

/// Appends trace records to a file, one line each, written through at once so that a trace cut
/// short by Ctrl-C or a crash is still valid up to its last line.
package final class TraceWriter {
    /// The trace's path, as the caller gave it; errors name it.
    package let path: String
    private let fd: Int32

    /// Creates (or truncates) `path` and writes the header.
    package init(path: String) throws(TraceWriterError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TraceWriterError(path: path, errno: Errno(rawValue: errno)) }
        try write(Trace.header + "\n")
    }

    deinit { close(fd) }

    /// Appends one record.
    package func append(_ record: Trace.Record) throws {
        try write(try Trace.line(record) + "\n")
    }

    private func write(_ text: String) throws(TraceWriterError) {
        do {
            try FileDescriptor(rawValue: fd).writeAll(text.utf8)
        } catch {
            throw TraceWriterError(path: path, errno: error as? Errno ?? .ioError)
        }
    }
}

/// A trace file could not be written.
package struct TraceWriterError: Error, CustomStringConvertible {
    /// The trace's path.
    package var path: String
    /// The failed `open` or `write`'s errno.
    package var errno: Errno
    /// `cannot write the trace PATH: REASON`, one line.
    package var description: String { "cannot write the trace \(path): \(errno)".escapingControlCharacters }
}
