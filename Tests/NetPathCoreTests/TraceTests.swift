// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// Parsing traces: what `netpathctl simulate` replays, and every way a file can be wrong.
@Suite("Trace")
struct TraceTests {
    static let header = #"{"netpath_trace":1}"#

    /// A record line at second `second` with `interfaces` as its JSON array.
    static func record(_ second: Int = 0, interfaces: String = #"[{"index":1,"name":"lo"}]"#) -> String {
        #"{"time":"2026-01-01T00:00:0\#(second)Z","state":{"interfaces":\#(interfaces)}}"#
    }

    static func parse(_ text: String) -> Result<Trace.Contents, Trace.FormatError> {
        Trace.parse(Array(text.utf8), file: "t.jsonl")
    }

    static func parse(bytes: [UInt8]) -> Result<Trace.Contents, Trace.FormatError> {
        Trace.parse(bytes, file: "t.jsonl")
    }

    /// The error of a parse that must fail.
    static func error(_ text: String) throws -> Trace.FormatError {
        try error(bytes: Array(text.utf8))
    }

    static func error(bytes: [UInt8]) throws -> Trace.FormatError {
        switch parse(bytes: bytes) {
        case .success(let contents): throw TestFailure("expected an error, parsed \(contents.records.count) records")
        case .failure(let error): return error
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a well-formed trace parses to its records, with comments and blank lines skipped")
    func wellFormed() throws {
        let text = "\(Self.header)\n# a comment\n\n\(Self.record(0))\n\(Self.record(1))\n"
        let contents = try Self.parse(text).get()
        #expect(contents.records.count == 2)
        #expect(contents.records[1].state.interfaces.map(\.name) == ["lo"])
        #expect(contents.truncation == nil)
    }

    // The old parser split lines on Character "\n", and Swift reads "\r\n" as one Character: the
    // whole file was one line, and the error said the header was expected where it was found.
    @Test("CRLF line ends are accepted: the same records as with LF")
    func crlf() throws {
        let lf = "\(Self.header)\n\(Self.record(0))\n\(Self.record(1))\n"
        let crlf = lf.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        #expect(Array(crlf.utf8).filter { $0 == 0x0D }.count == 3)
        #expect(try Self.parse(crlf).get() == Self.parse(lf).get())
    }

    @Test("a byte that is not UTF-8 is an error at its line and column, with the byte and its offset")
    func invalidUTF8() throws {
        // Line 3, after `{"time":"…","state":{"interfaces":[{"index":1,"name":"l`.
        let prefix = Array("\(Self.header)\n\(Self.record(0))\n".utf8)
        let line = Array(Self.record(1, interfaces: #"[{"index":1,"name":"lo"}]"#).utf8)
        let at = try #require(line.firstIndex(of: UInt8(ascii: "o")))
        var bad = line
        bad[at] = 0xFF
        let error = try Self.error(bytes: prefix + bad + [0x0A])
        #expect(error.line == 3)
        #expect(error.column == at + 1)
        #expect(
            error.description
                == "t.jsonl:3:\(at + 1): error: byte 0xFF (offset \(prefix.count + at)) is not valid UTF-8; the file must be UTF-8 text"
        )
    }

    @Test("a bad value with control characters in it gives a one-line error that shows them escaped")
    func controlCharactersAreEscaped() throws {
        let error = try Self.error(
            "\(Self.header)\n{\"time\":\"noon\\nand\\u001B[2J\",\"state\":{\"interfaces\":[]}}\n"
        )
        #expect(error.line == 2)
        #expect(error.description == #"t.jsonl:2: error: time: not an RFC 3339 time: "noon\nand\u001B[2J""#)
    }

    @Test(
        "record values a kernel never reports are errors naming the line and the key",
        arguments: [
            // An MTU that does not fit, or is not an integer: JSONDecoder alone says "not valid JSON".
            (
                #"[{"index":1,"name":"lo","mtu":5000000000}]"#,
                "state.interfaces[0].mtu: expected an MTU (an integer from 0 to 4294967295), found 5000000000"
            ),
            (
                #"[{"index":1,"name":"lo","mtu":-1}]"#,
                "state.interfaces[0].mtu: expected an MTU (an integer from 0 to 4294967295), found -1"
            ),
            (
                #"[{"index":1,"name":"lo","mtu":1.5}]"#,
                "state.interfaces[0].mtu: expected an MTU (an integer from 0 to 4294967295), found 1.5"
            ),
            (
                #"[{"index":0,"name":"lo"}]"#,
                "state.interfaces[0].index: expected an interface index (an integer from 1 to 2147483647), found 0"
            ),
            (
                #"[{"index":-3,"name":"lo"}]"#,
                "state.interfaces[0].index: expected an interface index (an integer from 1 to 2147483647), found -3"
            ),
            (
                #"[{"index":1,"name":"lo"},{"index":1,"name":"eth0"}]"#,
                "state.interfaces[1].index: index 1 is also interfaces[0]'s; each interface needs its own"
            ),
            (
                #"[{"index":2,"name":"eth0"},{"index":1,"name":"eth0"}]"#,
                #"state.interfaces[1].name: name "eth0" is also interfaces[0]'s; each interface needs its own"#
            ),
            (
                #"[{"index":1,"name":"lo","addresses":[{"address":"192.0.2.1","prefix_len":33}]}]"#,
                "state.interfaces[0].addresses[0].prefix_len: expected an IPv4 prefix length (an integer from 0 to 32), found 33"
            ),
            (
                #"[{"index":1,"name":"lo","addresses":[{"address":"2001:db8::1","prefix_len":129}]}]"#,
                "state.interfaces[0].addresses[0].prefix_len: expected an IPv6 prefix length (an integer from 0 to 128), found 129"
            ),
            (
                #"[{"index":1,"name":"lo","addresses":[{"address":"192.0.2.1","prefix_len":-1}]}]"#,
                "state.interfaces[0].addresses[0].prefix_len: expected an IPv4 prefix length (an integer from 0 to 32), found -1"
            ),
            (
                #"[{"index":1,"name":"lo","default_routes":[{"family":5,"metric":0,"table":254}]}]"#,
                "state.interfaces[0].default_routes[0].family: expected an address family (4 or 6), found 5"
            ),
            (
                #"[{"index":1,"name":"lo","default_routes":[{"family":4,"metric":-7,"table":254}]}]"#,
                "state.interfaces[0].default_routes[0].metric: expected a route metric (an integer from 0 to 4294967295), found -7"
            ),
        ]
    )
    func badRecordValues(_ interfaces: String, _ message: String) throws {
        let error = try Self.error("\(Self.header)\n\(Self.record(0))\n\(Self.record(1, interfaces: interfaces))\n")
        #expect(error.line == 3)
        #expect(error.description == "t.jsonl:3: error: \(message)")
    }

    @Test("a target route's interface index and prefix length are checked too")
    func targetRoutes() throws {
        let state =
            #"{"interfaces":[],"targets":{"vpn":{"addresses":[],"routes":[{"interface_index":1,"prefix_len":200,"metric":0}]}}}"#
        let error = try Self.error("\(Self.header)\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":\(state)}\n")
        #expect(
            error.message
                == "state.targets.vpn.routes[0].prefix_len: expected a prefix length (an integer from 0 to 128), found 200"
        )
    }

    @Test(
        "a target's resolution round-trips; an older trace's empty addresses read as a failed lookup; a bad one is named"
    )
    func targetResolution() throws {
        for resolution in [
            SystemState.TargetReachability.Resolution.pending, .failed(reason: "Temporary failure in name resolution"),
        ] {
            let state = SystemState(targets: ["vpn": .init(addresses: [], routes: [], resolution: resolution)])
            let line = try JSONCoding.line(Trace.Record(time: Date(), state: state))
            let contents = try Self.parse("\(Self.header)\n\(line)\n").get()
            #expect(contents.records.first?.state.targets["vpn"]?.resolution == resolution, "\(line)")
        }
        let resolved = SystemState(targets: ["vpn": .init(addresses: ["192.0.2.7"], routes: [])])
        let encoded = try JSONCoding.line(resolved)
        #expect(!encoded.contains("resolution"), "a resolved target is written as before: \(encoded)")

        let old = #"{"interfaces":[],"targets":{"vpn":{"addresses":[],"routes":[]}}}"#
        let contents = try Self.parse("\(Self.header)\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":\(old)}\n").get()
        #expect(contents.records.first?.state.targets["vpn"]?.resolution == .failed(reason: "no address"))

        let bad = #"{"interfaces":[],"targets":{"vpn":{"addresses":[],"routes":[],"resolution":"later\n"}}}"#
        let error = try Self.error("\(Self.header)\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":\(bad)}\n")
        #expect(error.line == 2)
        #expect(
            error.message
                == #"state.targets.vpn.resolution: expected "resolved", "pending" or "failed", found "later\n""#,
            "\(error.message)"
        )
    }

    @Test("the largest valid values still parse")
    func boundaries() throws {
        let interfaces =
            #"[{"index":2147483647,"name":"a","mtu":4294967295,"addresses":[{"address":"192.0.2.1","prefix_len":32},{"address":"2001:db8::1","prefix_len":128}]},{"index":1,"name":"b","mtu":0}]"#
        let contents = try Self.parse("\(Self.header)\n\(Self.record(0, interfaces: interfaces))\n").get()
        #expect(contents.records.first?.state.interfaces.map(\.mtu) == [0, 4_294_967_295])
    }

    // MARK: - Cut short

    @Test("a last line cut short is dropped with a truncation; the complete records before it are kept")
    func truncatedLastLine() throws {
        let complete = "\(Self.header)\n\(Self.record(0))\n\(Self.record(1))\n"
        let cut = String(Self.record(2).prefix(40))
        let contents = try Self.parse(complete + cut).get()
        #expect(contents.records == (try Self.parse(complete).get().records))
        let truncation = try #require(contents.truncation)
        #expect(truncation.line == 4)
        #expect(truncation.completeRecords == 2)
        #expect(
            truncation.description
                == "t.jsonl:4: warning: the last line is cut short (incomplete JSON, and no newline at its end), as a recording stopped by a full disk or a crash leaves it; ignored it and kept the 2 complete records before it"
        )
    }

    @Test("a last line cut inside a multi-byte character is a truncation too, not a UTF-8 error")
    func truncatedInsideACharacter() throws {
        let complete = Array("\(Self.header)\n\(Self.record(0))\n".utf8)
        let cut = Array(#"{"time":"2026-01-01T00:00:01Z","state":{"interfaces":[{"index":1,"name":"✓"#.utf8).dropLast(1)
        let contents = try Self.parse(bytes: complete + cut).get()
        #expect(contents.records.count == 1)
        #expect(contents.truncation?.line == 3)
        #expect(contents.truncation?.reason == "incomplete JSON")
    }

    @Test("a byte that is not UTF-8 inside the last line is an error, even without a newline after it")
    func invalidByteInTheLastLine() throws {
        let complete = Array("\(Self.header)\n\(Self.record(0))\n".utf8)
        let error = try Self.error(bytes: complete + Array(#"{"time":"#.utf8) + [0xFF] + Array(#"2026"#.utf8))
        #expect(error.line == 3)
        #expect(error.column == 9)
        #expect(error.message.hasPrefix("byte 0xFF (offset \(complete.count + 8)) is not valid UTF-8"))
    }

    @Test("a trace cut short in its first record replays nothing, with the truncation")
    func truncatedFirstRecord() throws {
        let contents = try Self.parse("\(Self.header)\n{\"time\":\"2026-").get()
        #expect(contents.records.isEmpty)
        #expect(contents.truncation?.completeRecords == 0)
    }

    @Test(
        "a bad line is an error, not a truncation, when it ends in a newline or is complete JSON",
        arguments: [
            ("\(header)\n\(record(0))\n{\"time\":\"2026-\n", 3, "not valid JSON"),  // newline: not cut short
            ("\(header)\n{oops\n\(record(0))", 2, "not valid JSON"),  // not the last line
            ("\(header)\n\(record(0))\n{\"time\":\"2026-01-01T00:00:01Z\"}", 3, "state: missing"),  // complete JSON
            ("\(header)\n\(record(0))\n\(record(1, interfaces: #"[{"index":0,"name":"x"}]"#))", 3, "index"),
        ]
    )
    func notATruncation(_ text: String, _ line: Int, _ message: String) throws {
        let error = try Self.error(text)
        #expect(error.line == line)
        #expect(error.message.contains(message), "\(error)")
    }

    @Test("a last line that is complete but has no newline is a record like any other")
    func completeLastLineWithoutNewline() throws {
        let contents = try Self.parse("\(Self.header)\n\(Self.record(0))").get()
        #expect(contents.records.count == 1)
        #expect(contents.truncation == nil)
    }
}
