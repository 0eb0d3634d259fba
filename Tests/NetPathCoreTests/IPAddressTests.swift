// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

@Suite("IPAddress")
struct IPAddressTests {
    /// (input, canonical text): the canonical form is what `inet_ntop` and `ip addr` print.
    static let canonical: [(String, String)] = [
        ("0.0.0.0", "0.0.0.0"),
        ("192.0.2.1", "192.0.2.1"),
        ("255.255.255.255", "255.255.255.255"),
        ("::", "::"),
        ("::1", "::1"),
        ("1::", "1::"),
        // RFC 5952 4.3: lower case.
        ("2001:DB8::AbCd", "2001:db8::abcd"),
        // RFC 5952 4.1: leading zeros suppressed.
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        // RFC 5952 4.2.1: "::" used to its maximum.
        ("2001:db8:0:0:0:0:2:1", "2001:db8::2:1"),
        // RFC 5952 4.2.2: a single zero group is not shortened.
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
        ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
        // RFC 5952 4.2.3: the longest run is shortened, the first one on a tie.
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("fe80:0:0:0:200:5eff:fe00:5301", "fe80::200:5eff:fe00:5301"),
        // RFC 5952 5: IPv4-mapped addresses keep the dotted tail.
        ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
        ("::FFFF:c000:0201", "::ffff:192.0.2.1"),
        // An embedded IPv4 tail elsewhere is just two groups.
        ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        // A zone suffix is dropped.
        ("fe80::1%eth0", "fe80::1"),
    ]

    @Test(arguments: canonical)
    func parsedAddressFormatsCanonically(_ input: String, _ expected: String) throws {
        let address = try #require(IPAddress(input))
        #expect(address.description == expected)
        // The canonical text parses back to the same address.
        #expect(IPAddress(expected) == address)
    }

    @Test(arguments: [
        "", " ", "1", "1.2.3", "1.2.3.4.5", "1..2.3", "1.2.3.", ".1.2.3",
        "256.1.1.1", "1.2.3.1000", "01.2.3.4", "1.2.3.04", "0x1.2.3.4",
        "+1.2.3.4", "1.2.3.+4", "-0.1.2.3", "1.2.-3.4", " 1.2.3.4", "1.2.3.4 ", "١.٢.٣.٤",
        ":", ":::", "1:::2", "1::2::3", ":1::", "1::2:", ":1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:",
        "12345::", "g::1", "::g", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2:3:4:5:6:7:8",
        "::+1", "::-0", "+1::", "::0x1", "::1.2.3.4:5", "1.2.3.4::", "::256.1.1.1", "::1.2.3",
        "1:2:3:4:5:6:7:1.2.3.4", "::ffff:01.2.3.4", "fe80::1/64", "[::1]",
    ])
    func malformedTextIsRejected(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func bytesGiveFamilyByLength() throws {
        #expect(try #require(IPAddress(bytes: [192, 0, 2, 1])).family == .ipv4)
        #expect(try #require(IPAddress(bytes: [UInt8](repeating: 0, count: 16))).family == .ipv6)
        #expect(IPAddress(bytes: []) == nil)
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(bytes: [UInt8](repeating: 0, count: 15)) == nil)
    }

    @Test func parsedBytesAreNetworkOrder() {
        #expect(IPAddress("192.0.2.1").bytes == [192, 0, 2, 1])
        #expect(IPAddress("2001:db8::1").bytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
        #expect(IPAddress("::ffff:1.2.3.4").bytes == [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 1, 2, 3, 4])
    }

    @Test(arguments: [
        ("169.254.0.1", true), ("169.255.0.1", false), ("10.0.0.1", false),
        ("fe80::1", true), ("febf::1", true), ("fec0::1", false), ("2001:db8::1", false),
    ])
    func linkLocalCoversOnlyTheLinkLocalPrefixes(_ text: String, _ expected: Bool) {
        #expect(IPAddress(text)?.isLinkLocal == expected)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.0.0.53", true), ("128.0.0.1", false), ("::1", true), ("::2", false),
        ("::ffff:127.0.0.1", false),
    ])
    func loopbackCoversOneTwentySevenSlashEightAndColonColonOne(_ text: String, _ expected: Bool) {
        #expect(IPAddress(text)?.isLoopback == expected)
    }

    @Test(arguments: [
        ("192.0.2.77", "192.0.2.0", 24, true),
        ("192.0.3.77", "192.0.2.0", 24, false),
        ("192.0.2.130", "192.0.2.128", 25, true),
        ("192.0.2.127", "192.0.2.128", 25, false),
        ("203.0.113.9", "0.0.0.0", 0, true),
        ("203.0.113.9", "203.0.113.9", 32, true),
        ("203.0.113.9", "203.0.113.8", 32, false),
        ("2001:db8:1::5", "2001:db8::", 32, true),
        ("2001:db9::5", "2001:db8::", 32, false),
        ("2001:db8::5", "2001:db8::", 127, false),
        ("192.0.2.1", "::", 0, false),
    ])
    func prefixMembershipComparesLeadingBits(_ address: String, _ network: String, _ length: Int, _ expected: Bool) {
        #expect(IPAddress(address)!.isIn(IPAddress(network)!, prefixLength: length) == expected)
    }

    @Test func ordersIPv4BeforeIPv6ThenByBytes() {
        let sorted: [IPAddress] = ["2001:db8::1", "10.0.0.2", "::1", "10.0.0.10", "9.255.255.255"].sorted()
        #expect(sorted.map(\.description) == ["9.255.255.255", "10.0.0.2", "10.0.0.10", "::1", "2001:db8::1"])
    }

    @Test func codesAsItsCanonicalText() throws {
        let addresses: [IPAddress] = ["192.0.2.1", "2001:db8::1"]
        let data = try JSONEncoder().encode(addresses)
        #expect(String(decoding: data, as: UTF8.self) == #"["192.0.2.1","2001:db8::1"]"#)
        #expect(try JSONDecoder().decode([IPAddress].self, from: data) == addresses)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([IPAddress].self, from: Data(#"["999.1.1.1"]"#.utf8))
        }
    }

    @Test func interfaceAddressParsesCIDRAndDefaultsScopeFromTheAddress() throws {
        let global = try #require(InterfaceAddress(cidr: "192.0.2.10/24"))
        #expect(global.prefixLength == 24 && global.scope == .global && global.description == "192.0.2.10/24")
        #expect(InterfaceAddress(cidr: "fe80::1/64")?.scope == .link)
        #expect(InterfaceAddress(cidr: "127.0.0.1/8")?.scope == .host)
        #expect(InterfaceAddress(cidr: "2001:db8::1")?.prefixLength == 128)
        #expect(InterfaceAddress(cidr: "192.0.2.10/33") == nil)
        #expect(InterfaceAddress(cidr: "192.0.2.10/-1") == nil)
        #expect(InterfaceAddress(cidr: "192.0.2.10/x") == nil)
        #expect(InterfaceAddress(cidr: "nonsense/24") == nil)
    }

    @Test func interfaceAddressUsabilityFollowsScopeAndDAD() {
        #expect(InterfaceAddress(cidr: "192.0.2.10/24")!.isUsable)
        #expect(!InterfaceAddress(cidr: "169.254.7.7/16")!.isUsable)
        #expect(!InterfaceAddress(cidr: "127.0.0.1/8")!.isUsable)
        #expect(InterfaceAddress(cidr: "2001:db8::2/64")!.isUsable)
        #expect(!InterfaceAddress(cidr: "fe80::2/64")!.isUsable)
        #expect(!InterfaceAddress("2001:db8::2", prefixLength: 64, isTentative: true).isUsable)
        #expect(!InterfaceAddress("2001:db8::2", prefixLength: 64, isDADFailed: true).isUsable)
        // A deprecated address still works for existing and, if nothing else exists, new connections.
        #expect(InterfaceAddress("2001:db8::2", prefixLength: 64, isDeprecated: true).isUsable)
    }

    /// The formatting as first written (groups joined from `String(radix:)` pieces): the
    /// reference the byte writer must match.
    static func reference(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var bestStart = -1
        var bestLength = 0
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
                if j - i > bestLength { (bestStart, bestLength) = (i, j - i) }
                i = j
            } else {
                i += 1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        if bestStart == 0 && bestLength == 5 && groups[5] == 0xffff {
            return "::ffff:" + bytes[12...].map(String.init).joined(separator: ".")
        }
        var out = ""
        var k = 0
        while k < 8 {
            if k == bestStart {
                out += "::"
                k += bestLength
                continue
            }
            if !out.isEmpty && !out.hasSuffix(":") { out += ":" }
            out += String(groups[k], radix: 16)
            k += 1
        }
        return out
    }

    @Test(
        "every address formats as the reference does, and parses back: zero runs, ties, mapped tails, all digit widths"
    )
    func descriptionMatchesTheReference() throws {
        var generator = SystemRandomNumberGenerator()
        // Groups drawn mostly from values that exercise the writer: zeros (runs), digit widths,
        // 0xffff (mapped), and any value.
        let groupValues: [UInt16] = [0, 0, 0, 1, 0xa, 0x10, 0xff, 0x100, 0xfff, 0x1000, 0xffff, 0xabcd]
        for round in 0..<20_000 {
            let bytes: [UInt8]
            if round % 4 == 0 {
                bytes = (0..<4).map { _ in
                    [0, 1, 9, 10, 99, 100, 199, 255, UInt8.random(in: 0...255, using: &generator)].randomElement(
                        using: &generator
                    )!
                }
            } else {
                var groups = (0..<8).map { _ in
                    Bool.random(using: &generator)
                        ? groupValues.randomElement(using: &generator)!
                        : UInt16.random(in: 0...0xffff, using: &generator)
                }
                if round % 7 == 0 { groups.replaceSubrange(0..<6, with: [0, 0, 0, 0, 0, 0xffff]) }
                bytes = groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
            }
            let address = try #require(IPAddress(bytes: bytes))
            let expected = Self.reference(bytes)
            #expect(address.description == expected, "\(bytes)")
            #expect(IPAddress(address.description) == address, "\(address.description) does not parse back")
            if address.description != expected { return }
            // With a prefix length, every one from -1 to 129 (the property is settable).
            let length = Int.random(in: -1...129, using: &generator)
            let cidr = InterfaceAddress(address, prefixLength: length)
            #expect(cidr.description == expected + "/" + String(length), "\(bytes) /\(length)")
        }
    }
}
