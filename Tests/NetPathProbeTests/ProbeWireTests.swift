// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathProbe

/// The wire format between the agent and netpath-probe: what it writes reads back, and what
/// does not follow it is refused with a reason, whichever side sends it.
struct ProbeWireTests {
    @Test("escaping keeps every byte and never writes a space, a newline or a control character")
    func escapingRoundTrips() throws {
        let samples: [[UInt8]] = [
            [], Array("-".utf8), Array("a b\n%\u{1b}".utf8), [0xff, 0x00, 0x7f, 0x25], Array(0...255),
        ]
        for bytes in samples {
            let word = ProbeWire.escape(bytes)
            #expect(!word.isEmpty)
            #expect(word.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }, "\(word)")
            #expect(try ProbeWire.unescape(Array(word.utf8), field: "X") == bytes)
        }
    }

    @Test("a request reads back as it was written")
    func requestRoundTrips() throws {
        let http = ProbeRequest(
            interface: "eth\\xff0",
            index: 7,
            method: .http(uri: "http://10.0.0.1/gen 204", response: ""),
            timeout: .milliseconds(2500)
        )
        let line = try #require(ProbeWire.encode(id: 42, http))
        #expect(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" })
        let decoded = try ProbeWire.decodeRequest(Array(line.utf8.dropLast()))
        #expect(decoded.id == 42 && decoded.interface == [0x65, 0x74, 0x68, 0xff, 0x30] && decoded.index == 7)
        #expect(decoded.timeoutMilliseconds == 2500)
        #expect(decoded.method == .http(uri: Array("http://10.0.0.1/gen 204".utf8), response: []))

        let icmp = ProbeRequest(
            interface: "wan",
            index: 3,
            method: .icmp(hosts: ["10.0.0.1", "example.org"], count: 3, reliability: 1),
            timeout: .seconds(2)
        )
        let icmpLine = try #require(ProbeWire.encode(id: 1, icmp))
        #expect(
            try ProbeWire.decodeRequest(Array(icmpLine.utf8.dropLast())).method
                == .icmp(hosts: [Array("10.0.0.1".utf8), Array("example.org".utf8)], count: 3, reliability: 1)
        )
    }

    @Test("a request over a limit is not written")
    func oversizedRequestsAreRefused() {
        let long = String(repeating: "a", count: ProbeWire.maximumURLLength + 1)
        #expect(
            ProbeWire.encode(
                id: 1,
                ProbeRequest(interface: "e", index: 1, method: .http(uri: long, response: ""), timeout: .seconds(1))
            ) == nil
        )
        #expect(
            ProbeWire.encode(
                id: 1,
                ProbeRequest(
                    interface: "e",
                    index: 1,
                    method: .icmp(hosts: [], count: 1, reliability: 1),
                    timeout: .seconds(1)
                )
            ) == nil
        )
        #expect(
            ProbeWire.encode(
                id: 1,
                ProbeRequest(
                    interface: "e",
                    index: 1,
                    method: .icmp(hosts: ["a"], count: 1, reliability: 2),
                    timeout: .seconds(1)
                )
            ) == nil
        )
        #expect(
            ProbeWire.encode(
                id: 1,
                ProbeRequest(
                    interface: "a-very-long-interface-name",
                    index: 1,
                    method: .http(uri: "http://x/", response: ""),
                    timeout: .seconds(1)
                )
            ) == nil
        )
        #expect(
            ProbeWire.encode(
                id: 1,
                ProbeRequest(
                    interface: "e",
                    index: 1,
                    method: .http(uri: "http://x/", response: ""),
                    timeout: .seconds(3600)
                )
            ) == nil
        )
    }

    @Test("a result reads back as it was written, with the portal URL's bytes intact")
    func resultRoundTrips() throws {
        let fields = ProbeWire.ProbeResultFields(
            connectivity: .portal,
            roundTripMicroseconds: 1234,
            lossPartsPerMillion: 0,
            portalURL: [0x68, 0xff, 0x0a],
            evidence: Array("HTTP 302 to h\u{ff}".utf8)
        )
        let line = ProbeWire.encode(id: 9, fields)
        #expect(try ProbeWire.decodeHelperMessage(Array(line.utf8.dropLast())) == .result(id: 9, fields))
        let hello = ProbeWire.Hello(uid: 65534, gid: 65534, effectiveCapabilities: 0x2000, mode: "icmp")
        #expect(try ProbeWire.decodeHelperMessage(Array(ProbeWire.encode(hello).utf8.dropLast())) == .hello(hello))
    }

    @Test(
        "malformed helper lines are refused with a reason",
        arguments: [
            "", "result", "result 1 full - - - ok extra", "result x full - - - ok", "result 1 great - - - ok",
            "result 1 full 99999999999 - - ok", "result 1 full - 1000001 - ok", "result 1 full - - http://x ok",
            "result 1 full - - - -", "result 1 full - - - a%2", "result 1 full - - - a%zz", "result 1 full - - - a%00b",
            "result 1  full - - - ok", "result 1 full - - - \u{1b}[31m", "hello 2 1 1 0 http", "hello 1 1 1 0 ftp",
            "hello 1 -1 1 0 http", "banana", "result 18446744073709551616 full - - - ok",
            "result 1 portal - - " + String(repeating: "a", count: 2049) + " ok",
        ]
    )
    func malformedHelperLines(line: String) {
        #expect(throws: ProbeWire.Error.self) { try ProbeWire.decodeHelperMessage(Array(line.utf8)) }
    }

    @Test("a line longer than the limit is refused before it is split")
    func overlongLines() {
        let line = "result 1 full - - - " + String(repeating: "a", count: ProbeWire.maximumLineLength)
        #expect(throws: ProbeWire.Error("line longer than \(ProbeWire.maximumLineLength) bytes")) {
            try ProbeWire.decodeHelperMessage(Array(line.utf8))
        }
    }

    @Test(
        "malformed requests are refused with a reason",
        arguments: [
            "probe 1 eth0 1 1000 http", "probe 1 eth0 1 0 http http://x -", "probe 1 - 1 1000 http http://x -",
            "probe 1 a/b 1 1000 http http://x -", "probe 1 eth0 1 1000 ftp a b", "probe 1 eth0 1 1000 icmp 1 2 a",
            "probe 1 eth0 1 1000 icmp 0 1 a", "probe 1 eth0 1 1000 icmp 21 1 a", "probe 1 eth0 -1 1000 http http://x -",
            "probe 1 abcdefghijklmnop 1 1000 http http://x -",
        ]
    )
    func malformedRequests(line: String) {
        #expect(throws: ProbeWire.Error.self) { try ProbeWire.decodeRequest(Array(line.utf8)) }
    }

    @Test("an error's text names the field and holds no control character")
    func errorText() {
        do {
            _ = try ProbeWire.decodeHelperMessage(Array("result 1 \u{1b}[2J - - - ok".utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("STATE"))
            #expect(!error.description.unicodeScalars.contains { $0.properties.generalCategory == .control })
        }
    }
}
