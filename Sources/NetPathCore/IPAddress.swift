/// An IPv4 or IPv6 address, parsed and formatted without the C library.
///
/// The core module does no I/O, so it cannot call `inet_pton`; this type does the conversions
/// itself (RFC 5952 formatting for IPv6) and supports the prefix arithmetic path evaluation needs.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The address family.
    public enum Family: Int, Sendable, Hashable, Codable, Comparable {
        case ipv4 = 4
        case ipv6 = 6

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// 4 or 16 bytes, network order.
    public let bytes: [UInt8]

    /// The family, derived from the byte count.
    public var family: Family { bytes.count == 4 ? .ipv4 : .ipv6 }

    /// Creates an address from raw network-order bytes; `nil` unless there are 4 or 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses dotted-quad IPv4 or any RFC 4291 IPv6 text form (including an embedded IPv4 tail).
    ///
    /// A zone suffix (`%eth0`) is ignored.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        if let v4 = Self.parseIPv4(text) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// Whether this is an IPv4 link-local (169.254/16) or IPv6 link-local (fe80::/10) address.
    public var isLinkLocal: Bool {
        switch family {
        case .ipv4: return bytes[0] == 169 && bytes[1] == 254
        case .ipv6: return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80
        }
    }

    /// Whether this is a loopback address (127/8 or ::1).
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return bytes[0] == 127
        case .ipv6: return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// Whether the first `prefixLength` bits equal those of `network`.
    public func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        guard network.family == family else { return false }
        let bits = max(0, min(prefixLength, bytes.count * 8))
        let full = bits / 8
        if bytes[0..<full] != network.bytes[0..<full] { return false }
        let rest = bits % 8
        if rest == 0 { return true }
        let mask = UInt8(0xff) << (8 - rest)
        return (bytes[full] & mask) == (network.bytes[full] & mask)
    }

    public var description: String {
        switch family {
        case .ipv4: return bytes.map(String.init).joined(separator: ".")
        case .ipv6: return Self.formatIPv6(bytes)
        }
    }

    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        if lhs.bytes.count != rhs.bytes.count { return lhs.bytes.count < rhs.bytes.count }
        return lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = UInt8(part) else {
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
                    guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
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

    private static func formatIPv6(_ bytes: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie.
        var bestStart = -1
        var bestLength = 0
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
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
        // IPv4-mapped addresses keep their dotted tail, as inet_ntop prints them.
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
}

extension IPAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = IPAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an IP address: \(text)")
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
