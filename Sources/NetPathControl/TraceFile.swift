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

    private static func read(_ path: String) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.unreadable(path: path, reason: Errno(rawValue: errno).description)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return .failure(.unreadable(path: path, reason: Errno(rawValue: errno).description))
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            return .failure(.unreadable(path: path, reason: "it is a directory"))
        }
        // Read to the end rather than to st_size: a trace may come from a pipe (`--trace /dev/stdin`).
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(path: path, reason: Errno(rawValue: errno).description))
            }
            if n == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }
}
