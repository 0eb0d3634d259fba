// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathConfig
import NetPathCore
import NetPathPlugin
import Synchronization
import SystemPackage

/// `event-log`: appends every event it receives as one JSON line (the event shape of docs/events.md, the
/// same object hooks read on stdin) to a file.
///
/// ```toml
/// [plugin.event-log]
/// path = "/var/log/netpath/events.jsonl"   # absolute; created with mode 0640
///
/// [[rule]]
/// name = "log-everything"
/// on = ["added", "removed", "up", "down", "carrier-up", "carrier-down", "address-added",
///       "address-removed", "changed", "satisfied", "unsatisfied"]
/// plugins = ["event-log"]
/// ```
///
/// The file is opened in append mode when the plugin starts, created with mode 0640 when it does
/// not exist (the mode is set explicitly, whatever the umask). For log rotation, the agent calls
/// ``reopen(context:)`` on SIGHUP: after `logrotate` renamed the file, the next line goes to a
/// new file at `path`. Every event is delivered, even ones a newer event made obsolete: a log
/// wants them all.
public struct EventLogPlugin: Plugin {
    public static let name = "event-log"
    public static let receivesObsoleteEvents = true

    /// The file's path.
    public let path: String
    /// The mode a new file gets.
    public static let mode: mode_t = 0o640
    private let file: LogFile

    public init(configuration: PluginConfiguration) throws {
        var settings = configuration
        let path = settings.string("path", required: true) ?? ""
        if settings.diagnostics.isEmpty, !path.hasPrefix("/") {
            settings.error(
                "\(settings.keyPath("path")) must be an absolute path, found \(TOMLValue.quoted(path))",
                at: "path"
            )
        }
        try settings.finish()
        self.path = path
        file = LogFile(path: path)
    }

    public func start(context: PluginContext) async throws {
        try file.open()
    }

    public func handle(_ event: Event, context: PluginContext) async throws {
        try file.append(JSONCoding.line(event) + "\n")
    }

    public func stop(context: PluginContext) async throws {
        file.close()
    }

    public func reopen(context: PluginContext) async throws {
        try reopen()
    }

    /// Closes the file and opens `path` again (creating it if it was renamed away).
    public func reopen() throws {
        try file.open()
    }
}

/// An append-only file descriptor shared by concurrent calls.
private final class LogFile: Sendable {
    let path: String
    private let descriptor = Mutex<Int32>(-1)

    init(path: String) { self.path = path }

    deinit { close() }

    /// Opens (or reopens) the file for appending; creates it with ``EventLogPlugin/mode``.
    func open() throws {
        let fd = try Self.openOrCreate(path)
        let old = descriptor.withLock { current in
            defer { current = fd }
            return current
        }
        if old >= 0 { Glibc.close(old) }
    }

    func close() {
        let old = descriptor.withLock { current in
            defer { current = -1 }
            return current
        }
        if old >= 0 { Glibc.close(old) }
    }

    /// Writes `line` in one `write(2)` where possible (O_APPEND keeps concurrent lines whole).
    func append(_ line: String) throws {
        try descriptor.withLock { fd in
            if fd < 0 { fd = try Self.openOrCreate(path) }
            do {
                try FileDescriptor(rawValue: fd).writeAll(line.utf8)
            } catch {
                throw EventLogError(path: path, operation: "write", errno: (error as? Errno ?? .ioError).rawValue)
            }
        }
    }

    private static func openOrCreate(_ path: String) throws -> Int32 {
        // O_EXCL first: only a file this call created gets its mode forced (an existing file
        // keeps whatever the administrator gave it).
        var fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, EventLogPlugin.mode)
        if fd >= 0 {
            // The umask may have taken bits away; the contract is 0640.
            _ = fchmod(fd, EventLogPlugin.mode)
            return fd
        }
        guard errno == EEXIST else { throw EventLogError(path: path, operation: "create", errno: errno) }
        fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw EventLogError(path: path, operation: "open", errno: errno) }
        return fd
    }
}

/// A failure opening or writing the event log, with the errno.
public struct EventLogError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var errno: Int32

    public var description: String { "\(operation) \(path): \(String(cString: strerror(errno))) [\(errno)]" }
}
