// SPDX-License-Identifier: Apache-2.0

/// An IPv4 or IPv6 address, parsed and formatted without the C library.
///
/// The core module does no I/O, so it cannot call `inet_pton`; this type does the conversions
/// itself (RFC 5952 formatting for IPv6) and supports the prefix arithmetic path evaluation needs.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The address family.
    ///
    /// Complete: an address is IPv4 or IPv6, so this enum will not grow.
    public enum Family: Int, Sendable, Hashable, Codable, Comparable {
        /// IPv4 (`AF_INET`).
        case ipv4 = 4
        /// IPv6 (`AF_INET6`).
        case ipv6 = 6

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    // Stored inline as two words rather than `[UInt8]`: the netlink engine creates several
    // addresses per route message, and a heap allocation each showed up as overruns in a storm.
    private let high: UInt64
    private let low: UInt64

    /// The address family.
    public let family: Family

    /// 4 or 16 bytes, network order.
    public var bytes: [UInt8] {
        switch family {
        case .ipv4: return (0..<4).map { UInt8(truncatingIfNeeded: low >> (24 - 8 * $0)) }
        case .ipv6:
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        }
    }

    /// Creates an address from raw network-order bytes; `nil` unless there are 4 or 16.
    public init?(bytes: [UInt8]) {
        let made = bytes.withUnsafeBytes { IPAddress(rawBytes: $0) }
        guard let made else { return nil }
        self = made
    }

    /// Creates an address from 4 or 16 network-order bytes in memory, without copying them to the heap.
    public init?(rawBytes raw: UnsafeRawBufferPointer) {
        switch raw.count {
        case 4:
            family = .ipv4
            high = 0
            low = raw.reduce(0) { $0 << 8 | UInt64($1) }
        case 16:
            family = .ipv6
            high = raw[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
            low = raw[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        default:
            return nil
        }
    }

    /// Parses dotted-quad IPv4 or any RFC 4291 IPv6 text form (including an embedded IPv4 tail).
    ///
    /// A zone suffix (`%eth0`) is ignored.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        guard let parsed = Self.parseIPv4(text) ?? Self.parseIPv6(text), let address = IPAddress(bytes: parsed) else {
            return nil
        }
        self = address
    }

    /// Whether this is an IPv4 link-local (169.254/16) or IPv6 link-local (fe80::/10) address.
    public var isLinkLocal: Bool {
        switch family {
        case .ipv4: return low >> 16 == 0xa9fe
        case .ipv6: return high >> 54 == 0x3fa
        }
    }

    /// Whether this is a loopback address (127/8 or ::1).
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return low >> 24 == 127
        case .ipv6: return high == 0 && low == 1
        }
    }

    /// Whether the first `prefixLength` bits equal those of `network`.
    public func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        guard network.family == family else { return false }
        switch family {
        case .ipv4:
            let bits = max(0, min(prefixLength, 32))
            let mask: UInt64 = bits == 0 ? 0 : (0xffff_ffff << (32 - bits)) & 0xffff_ffff
            return low & mask == network.low & mask
        case .ipv6:
            let bits = max(0, min(prefixLength, 128))
            let highMask: UInt64 = bits >= 64 ? .max : (bits == 0 ? 0 : .max << (64 - bits))
            let lowMask: UInt64 = bits <= 64 ? 0 : (bits == 128 ? .max : .max << (128 - bits))
            return high & highMask == network.high & highMask && low & lowMask == network.low & lowMask
        }
    }

    /// Dotted decimal for IPv4; RFC 5952 for IPv6 (the longest run of two or more zero groups
    /// compressed, the first on a tie; lower-case hex; an IPv4-mapped address with its dotted
    /// tail, as `inet_ntop` prints it).
    ///
    /// Written as ASCII into the string's own storage: every hook's environment, every event's
    /// JSON and the status output format addresses, and joining `String(radix:)` pieces made
    /// formatting them much of what building a hook's environment cost.
    public var description: String {
        // Not through `write(into:)`: a public body that calls a `package` method from a closure
        // is serialized for other modules (-cross-module-optimization) without the closure's
        // symbol, and the release link fails.
        switch family {
        case .ipv4:
            return String(unsafeUninitializedCapacity: 15) { out in
                Self.writeDotted(UInt32(truncatingIfNeeded: low), into: out, at: 0)
            }
        case .ipv6:
            return String(unsafeUninitializedCapacity: Self.longestDescription) { out in formatIPv6(into: out) }
        }
    }

    /// The most bytes ``description`` takes: an IPv4-mapped IPv6 address, `ffff:…:255.255.255.255`.
    package static let longestDescription = 45

    /// Writes ``description`` at the start of `out`, which has room for
    /// ``longestDescription`` bytes; returns how many it wrote. (For texts that hold an address
    /// among other things, written at once into their own storage.)
    package func write(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        switch family {
        case .ipv4: Self.writeDotted(UInt32(truncatingIfNeeded: low), into: out, at: 0)
        case .ipv6: formatIPv6(into: out)
        }
    }

    /// The group `index` (0–7) of an IPv6 address.
    private func group(_ index: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: (index < 4 ? high : low) >> (48 - 16 * (index % 4)))
    }

    private func formatIPv6(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie.
        var bestStart = -1
        var bestLength = 0
        var i = 0
        while i < 8 {
            if group(i) == 0 {
                var j = i
                while j < 8 && group(j) == 0 { j += 1 }
                if j - i > bestLength {
                    bestStart = i
                    bestLength = j - i
                }
                i = j
            } else {
                i += 1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        let colon = UInt8(ascii: ":")
        var index = 0
        // IPv4-mapped addresses keep their dotted tail, as inet_ntop prints them.
        if bestStart == 0 && bestLength == 5 && group(5) == 0xffff {
            for byte in "::ffff:".utf8 {
                out[index] = byte
                index += 1
            }
            return Self.writeDotted(UInt32(truncatingIfNeeded: low), into: out, at: index)
        }
        var k = 0
        while k < 8 {
            if k == bestStart {
                out[index] = colon
                out[index + 1] = colon
                index += 2
                k += bestLength
                continue
            }
            if index > 0 && out[index - 1] != colon {
                out[index] = colon
                index += 1
            }
            index = Self.writeHex(group(k), into: out, at: index)
            k += 1
        }
        return index
    }

    /// Writes `value`'s four bytes as dotted decimal at `index`; returns the index after.
    private static func writeDotted(_ value: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int
    {
        var index = index
        for shift in [24, 16, 8, 0] as [UInt32] {
            if shift != 24 {
                out[index] = UInt8(ascii: ".")
                index += 1
            }
            let byte = UInt8(truncatingIfNeeded: value >> shift)
            if byte >= 100 {
                out[index] = UInt8(ascii: "0") + byte / 100
                index += 1
            }
            if byte >= 10 {
                out[index] = UInt8(ascii: "0") + byte / 10 % 10
                index += 1
            }
            out[index] = UInt8(ascii: "0") + byte % 10
            index += 1
        }
        return index
    }

    /// Writes `value` in lower-case hex without leading zeros at `index`; returns the index after.
    private static func writeHex(_ value: UInt16, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        var index = index
        var started = false
        for shift in [12, 8, 4, 0] as [UInt16] {
            let digit = UInt8(truncatingIfNeeded: value >> shift & 0xf)
            guard started || digit != 0 || shift == 0 else { continue }
            started = true
            out[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            index += 1
        }
        return index
    }

    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        (lhs.family, lhs.high, lhs.low) < (rhs.family, rhs.high, rhs.low)
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            // Digits only: UInt8("+1") and UInt8("-0") would otherwise parse.
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isWholeNumber }),
                let value = UInt8(part)
            else {
                return nil
            }
            // Leading zeros are ambiguous (octal in inet_aton); refuse them like inet_pton does.
            if part.count > 1 && part.first == "0" { return nil }
            out.append(value)
        }
        return out
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        sawGap = halves.count == 2

        func groups(_ part: String, allowV4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if allowV4Tail, i == pieces.count - 1, piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                } else {
                    // Hex digits only: UInt16("+f", radix: 16) would otherwise parse.
                    guard (1...4).contains(piece.count), piece.allSatisfy({ $0.isASCII && $0.isHexDigit }),
                        let value = UInt16(piece, radix: 16)
                    else { return nil }
                    result.append(value)
                }
            }
            return result
        }

        if sawGap {
            guard let h = groups(halves[0], allowV4Tail: false), let t = groups(halves[1], allowV4Tail: true) else {
                return nil
            }
            head = h
            tail = t
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard let h = groups(halves[0], allowV4Tail: true), h.count == 8 else { return nil }
            head = h
        }
        let all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}

extension IPAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = IPAddress(text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "not an IP address: \"\(text.escapingControlCharacters)\""
            )
        }
        self = address
    }

    // EventJSON writes addresses as this same ``description``: change it with this method.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
