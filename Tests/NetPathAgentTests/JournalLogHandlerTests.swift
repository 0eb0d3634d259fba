// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import Testing

@testable import NetPathAgent

/// A temporary file opened for appending, standing in for standard error; deleted on `close()`.
private final class CapturedStream {
    let path: String
    let fileDescriptor: Int32

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/netpath-log-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // O_APPEND, as journald's and a shell's redirections are: each write(2) lands whole.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND)
        fileDescriptor = fd
    }

    /// `"DEV:INO"` of this file, the form systemd puts in JOURNAL_STREAM.
    var journalStream: String {
        var info = stat()
        fstat(fileDescriptor, &info)
        return "\(info.st_dev):\(info.st_ino)"
    }

    var contents: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    var lines: [String] {
        contents.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    func close() {
        Glibc.close(fileDescriptor)
        unlink(path)
    }
}

private func logger(_ handler: JournalLogHandler) -> Logger {
    var handler = handler
    handler.logLevel = .trace
    return Logger(label: handler.label) { _ in handler }
}

/// A plain-format line: local timestamp with microseconds and UTC offset, then the rest.
private var timestampedLine: Regex<(Substring, Substring)> {
    #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}[+-]\d{4} (.*)$/#
}

@Suite struct JournalLogHandlerTests {
    @Test func journalStreamMatchingTheDescriptorGivesPriorityPrefixAndNoTimestamp() throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let handler = JournalLogHandler(
            label: "netpath.test",
            fileDescriptor: stream.fileDescriptor,
            environment: ["JOURNAL_STREAM": stream.journalStream]
        )
        #expect(handler.format == .journal)

        logger(handler).error("hook failed", metadata: ["hook": "50-vpn", "status": "1"])

        #expect(stream.lines == ["<3>netpath.test: hook failed hook=50-vpn status=1"])
    }

    @Test(arguments: [
        (Logger.Level.critical, 2), (.error, 3), (.warning, 4), (.notice, 5), (.info, 6), (.debug, 7), (.trace, 7),
    ])
    func levelMapsToSyslogPriority(level: Logger.Level, priority: Int) throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let handler = JournalLogHandler(
            label: "l",
            fileDescriptor: stream.fileDescriptor,
            environment: ["JOURNAL_STREAM": stream.journalStream]
        )

        logger(handler).log(level: level, "m")

        #expect(JournalLogHandler.priority(of: level) == priority)
        #expect(stream.lines == ["<\(priority)>l: m"])
    }

    @Test func journalStreamNamingAnotherFileGivesTimestampedLines() throws {
        let stream = try CapturedStream()
        let other = try CapturedStream()
        defer {
            stream.close()
            other.close()
        }
        let handler = JournalLogHandler(
            label: "netpath.test",
            fileDescriptor: stream.fileDescriptor,
            environment: ["JOURNAL_STREAM": other.journalStream]
        )
        #expect(handler.format == .plain)

        logger(handler).warning("slow hook", metadata: ["hook": "50-vpn"])

        let line = try #require(stream.lines.first)
        #expect(!line.hasPrefix("<"))
        let match = try #require(line.wholeMatch(of: timestampedLine))
        #expect(match.1 == "warning netpath.test: slow hook hook=50-vpn")
    }

    @Test(arguments: [nil, "", "garbage", "12", "12:", ":34", "1:2:3", "-1:5", "0x10:0x20"])
    func missingOrMalformedJournalStreamGivesPlainFormat(value: String?) throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let environment = value.map { ["JOURNAL_STREAM": $0] } ?? [:]

        let handler = JournalLogHandler(label: "l", fileDescriptor: stream.fileDescriptor, environment: environment)

        #expect(handler.format == .plain)
    }

    @Test func sameDeviceButDifferentInodeGivesPlainFormat() throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        var info = stat()
        fstat(stream.fileDescriptor, &info)

        let format = JournalLogHandler.format(
            forFileDescriptor: stream.fileDescriptor,
            journalStream: "\(info.st_dev):\(info.st_ino + 1)"
        )

        #expect(format == .plain)
    }

    @Test func closedDescriptorGivesPlainFormat() throws {
        let stream = try CapturedStream()
        let fd = stream.fileDescriptor
        let journalStream = stream.journalStream
        stream.close()

        #expect(JournalLogHandler.format(forFileDescriptor: fd, journalStream: journalStream) == .plain)
    }

    @Test func multiLineMessageKeepsThePriorityOnEveryJournalLine() throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let handler = JournalLogHandler(
            label: "netpath.config",
            fileDescriptor: stream.fileDescriptor,
            format: .journal
        )

        logger(handler).error("config rejected:\na.toml:3:1: error: x\na.toml:9:5: error: y")

        #expect(
            stream.lines == [
                "<3>netpath.config: config rejected:",
                "<3>netpath.config:   a.toml:3:1: error: x",
                "<3>netpath.config:   a.toml:9:5: error: y",
            ]
        )
    }

    @Test func multiLineMessageIsIndentedInPlainFormat() throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let handler = JournalLogHandler(label: "l", fileDescriptor: stream.fileDescriptor, format: .plain)

        logger(handler).info("first\nsecond")

        #expect(stream.lines.count == 2)
        #expect(stream.lines.first?.wholeMatch(of: timestampedLine)?.1 == "info l: first")
        #expect(stream.lines.last == "    second")
    }

    @Test func metadataMergesHandlerProviderAndCallSortedAndQuoted() throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        var handler = JournalLogHandler(
            label: "l",
            fileDescriptor: stream.fileDescriptor,
            format: .journal,
            metadataProvider: .init { ["provided": "p", "shared": "from-provider"] }
        )
        handler[metadataKey: "shared"] = "from-handler"
        handler[metadataKey: "zone"] = "a b"

        logger(handler).info(
            "m",
            metadata: [
                "shared": "from-call", "quote": "say \"hi\"", "newline": "x\ny", "eq": "k=v", "empty": "",
            ]
        )

        #expect(
            stream.lines == [
                #"<6>l: m empty="" eq="k=v" newline="x\ny" provided=p quote="say \"hi\"" shared=from-call zone="a b""#
            ]
        )
    }

    @Test func concurrentLoggersNeverInterleaveLines() async throws {
        let stream = try CapturedStream()
        defer { stream.close() }
        let handler = JournalLogHandler(label: "l", fileDescriptor: stream.fileDescriptor, format: .journal)
        let tasks = 8
        let perTask = 250
        let padding = String(repeating: "x", count: 200)

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let log = logger(handler)
                    for index in 0..<perTask { log.info("\(task)-\(index) \(padding)") }
                }
            }
        }

        let lines = stream.lines
        #expect(lines.count == tasks * perTask)
        #expect(lines.allSatisfy { $0.wholeMatch(of: #/<6>l: \d+-\d+ x{200}/#) != nil })
        #expect(Set(lines).count == tasks * perTask)
    }
}
