// SPDX-License-Identifier: Apache-2.0

import Glibc
import Logging
import SystemPackage

/// A `LogHandler` that writes one line per message to standard error, in the form journald
/// understands when systemd connected standard error to the journal.
///
/// Under systemd (`StandardError=journal`, the default for services) the service manager sets
/// `JOURNAL_STREAM` to the device and inode of the stream it gave the process, as `"DEV:INO"`
/// in decimal. When that matches standard error (`fstat(2)` on the descriptor), every line
/// starts with its syslog priority, `<N>` (sd-daemon(3)), so `journalctl -p warning` works and
/// the journal's own timestamp is the only one. Anywhere else (a terminal, a file, a pipe, or a
/// stream that was redirected after systemd started the process) a line carries a local
/// timestamp, the level, the logger's label, the message and the metadata:
///
/// ```
/// <4>netpath.hooks: hook exited 1 hook=50-vpn status=1                         (journal)
/// 2025-11-22T04:16:00.123456+0000 warning netpath.hooks: hook exited 1 hook=50-vpn status=1
/// ```
///
/// Levels map to priorities as critical → 2 (crit), error → 3, warning → 4, notice → 5,
/// info → 6, debug and trace → 7.
///
/// Metadata is appended as `key=value`, sorted by key; a value with spaces, quotes, `=` or
/// control characters is quoted with backslash escapes. A message with newlines becomes
/// several lines, each with the priority prefix: journald starts an entry at every newline,
/// and a continuation line without a prefix would be logged at the default priority.
///
/// - Important: Each message is formatted into one buffer and written with a single
///   `write(2)` (repeated only if the kernel accepts part of it), and no lock is held, so
///   lines from concurrent tasks never interleave below the pipe/stream atomicity limit and a
///   slow reader never blocks other loggers on a lock.
package struct JournalLogHandler: LogHandler {
    /// The line format.
    package enum Format: Sendable, Equatable {
        /// `<N>` syslog priority prefix, no timestamp: the descriptor is a journald stream.
        case journal
        /// Timestamp, level, label, message, metadata.
        case plain
    }

    /// The logger's label, written on every line.
    package let label: String
    /// The descriptor lines are written to; standard error unless a test says otherwise.
    package let fileDescriptor: Int32
    /// The format chosen when the handler was made.
    package let format: Format
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    /// A handler with an explicit format.
    ///
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - fileDescriptor: Where lines go; the handler never closes it.
    ///   - format: `.journal` for priority prefixes, `.plain` for timestamped lines.
    ///   - logLevel: The lowest level logged.
    ///   - metadataProvider: Contextual metadata added to every message.
    package init(
        label: String,
        fileDescriptor: Int32,
        format: Format,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.fileDescriptor = fileDescriptor
        self.format = format
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    /// A handler whose format follows `JOURNAL_STREAM` in `environment` and the identity of
    /// `fileDescriptor` (see ``format(forFileDescriptor:journalStream:)``).
    package init(
        label: String,
        fileDescriptor: Int32,
        environment: [String: String],
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.init(
            label: label,
            fileDescriptor: fileDescriptor,
            format: Self.format(forFileDescriptor: fileDescriptor, journalStream: environment["JOURNAL_STREAM"]),
            logLevel: logLevel,
            metadataProvider: metadataProvider
        )
    }

    /// The handler for the process's standard error, for `LoggingSystem.bootstrap`:
    ///
    /// ```swift
    /// LoggingSystem.bootstrap { label, provider in
    ///     JournalLogHandler.standardError(label: label, logLevel: level, metadataProvider: provider)
    /// }
    /// ```
    ///
    /// Whether standard error is the journal is decided once per process, on first use.
    package static func standardError(
        label: String,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> JournalLogHandler {
        JournalLogHandler(
            label: label,
            fileDescriptor: STDERR_FILENO,
            format: standardErrorFormat,
            logLevel: logLevel,
            metadataProvider: metadataProvider
        )
    }

    // A lazily initialised global: Swift runs the initialiser once, thread-safely. getenv is
    // safe here because nothing in the agent calls setenv.
    private static let standardErrorFormat: Format = format(
        forFileDescriptor: STDERR_FILENO,
        journalStream: getenv("JOURNAL_STREAM").map { String(cString: $0) }
    )

    /// `.journal` when `journalStream` (the value of `JOURNAL_STREAM`, `"DEV:INO"` in decimal)
    /// names the device and inode of `fileDescriptor`; `.plain` when it is unset, malformed,
    /// names another stream, or the descriptor cannot be examined.
    package static func format(forFileDescriptor fileDescriptor: Int32, journalStream: String?) -> Format {
        guard let journalStream else { return .plain }
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return .plain }
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return .plain }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .plain
    }

    /// The syslog priority journald records for `level`.
    package static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .critical: 2
        case .error: 3
        case .warning: 4
        case .notice: 5
        case .info: 6
        case .debug, .trace: 7
        }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        if let error = event.error, merged["error"] == nil { merged["error"] = "\(error)" }
        let line = render(level: event.level, message: event.message.description, metadata: merged)
        Self.write(line, to: fileDescriptor)
    }

    /// The bytes written for one message, newline included.
    func render(level: Logger.Level, message: String, metadata: Logger.Metadata) -> [UInt8] {
        let head: String
        let continuation: String
        switch format {
        case .journal:
            head = "<\(Self.priority(of: level))>\(label): "
            continuation = head + "  "
        case .plain:
            head = "\(Self.timestamp()) \(level) \(label): "
            continuation = "    "
        }
        var text = ""
        for (index, line) in message.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            text += index == 0 ? head : "\n" + continuation
            text += line
        }
        for key in metadata.keys.sorted() {
            text += " \(key)=\(Self.quoted("\(metadata[key]!)"))"
        }
        text += "\n"
        return Array(text.utf8)
    }

    /// `value` as is when it is one plain token, otherwise in double quotes with `\"`, `\\`,
    /// `\n`, `\t` and `\u{…}` escapes, so a value can never start a new line or fake a key.
    static func quoted(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy { scalar in
                scalar.value > 0x20 && scalar.value != 0x7F && scalar != "\"" && scalar != "=" && scalar != "\\"
            }
        if plain { return value }
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Local time with microseconds and the UTC offset, e.g. `2025-11-22T04:16:00.123456+0000`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var local = tm()
        localtime_r(&seconds, &local)
        var date = [CChar](repeating: 0, count: 32)
        var zone = [CChar](repeating: 0, count: 8)
        strftime(&date, date.count, "%Y-%m-%dT%H:%M:%S", &local)
        strftime(&zone, zone.count, "%z", &local)
        let micros = String(now.tv_nsec / 1000)
        let padded = String(repeating: "0", count: max(0, 6 - micros.count)) + micros
        return String(decoding: date.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            + "." + padded
            + String(decoding: zone.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // One write(2) for the whole line; writeAll repeats it only for the rest of a partial write
    // or after EINTR. Any other failure (EPIPE, EAGAIN on a non-blocking stream, EBADF) drops the
    // line: logging must never stop or block the agent.
    private static func write(_ bytes: [UInt8], to fileDescriptor: Int32) {
        _ = try? FileDescriptor(rawValue: fileDescriptor).writeAll(bytes)
    }
}
