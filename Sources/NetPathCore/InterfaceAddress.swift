// SPDX-License-Identifier: Apache-2.0

/// One address configured on an interface, as the kernel reports it.
public struct InterfaceAddress: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The address scope (`ip addr`'s `scope`).
    ///
    /// Complete: the kernel's named address scopes, unchanged since they were defined, so this
    /// enum will not grow.
    public enum Scope: String, Sendable, Hashable, Codable {
        /// `global` reaches everywhere, `link` only the local link, `host` only this host.
        case global, site, link, host, nowhere
    }

    /// The local address.
    public var address: IPAddress
    /// The prefix length of the on-link network.
    public var prefixLength: Int
    /// The scope.
    public var scope: Scope
    /// Duplicate address detection has not finished: the address cannot be used yet.
    public var isTentative: Bool
    /// Duplicate address detection failed: the address will never be usable.
    public var isDADFailed: Bool
    /// The preferred lifetime ran out: the address is kept, but new connections avoid it.
    public var isDeprecated: Bool

    /// The address family.
    public var family: IPAddress.Family { address.family }

    /// An address with a prefix length; global and usable unless the flags say otherwise.
    public init(
        _ address: IPAddress,
        prefixLength: Int,
        scope: Scope = .global,
        isTentative: Bool = false,
        isDADFailed: Bool = false,
        isDeprecated: Bool = false
    ) {
        self.address = address
        self.prefixLength = prefixLength
        self.scope = scope
        self.isTentative = isTentative
        self.isDADFailed = isDADFailed
        self.isDeprecated = isDeprecated
    }

    /// Parses `"192.0.2.10/24"`; scope defaults from the address (link-local gets `.link`).
    public init?(cidr: String, scope: Scope? = nil) {
        let parts = cidr.split(separator: "/", maxSplits: 1)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maxLength = address.family == .ipv4 ? 32 : 128
        let length = parts.count == 2 ? Int(parts[1]) : maxLength
        guard let length, (0...maxLength).contains(length) else { return nil }
        let defaultScope: Scope = address.isLoopback ? .host : (address.isLinkLocal ? .link : .global)
        self.init(address, prefixLength: length, scope: scope ?? defaultScope)
    }

    /// Whether a connection could use this address now.
    ///
    /// IPv4: any non-link-local address. IPv6: a global-scope address that finished DAD.
    public var isUsable: Bool {
        if isTentative || isDADFailed { return false }
        switch family {
        case .ipv4: return !address.isLinkLocal && scope != .host
        case .ipv6: return scope == .global && !address.isLinkLocal
        }
    }

    /// `ADDRESS/PREFIX`, as `ip` prints it: every interface event's hook environment holds its
    /// interface's, so it is written straight into the string's own storage rather than through
    /// an interpolation, which is slower on the way to the hook's spawn.
    public var description: String {
        // A prefix length no address has (the property is settable) is written the plain way.
        guard (0...128).contains(prefixLength) else { return "\(address)/\(prefixLength)" }
        return String(unsafeUninitializedCapacity: IPAddress.longestDescription + 4) { out in
            let end = address.write(into: out)
            out[end] = UInt8(ascii: "/")
            return DecimalDigits.write(prefixLength, into: out, at: end + 1)
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.address, lhs.prefixLength) < (rhs.address, rhs.prefixLength)
    }

    enum CodingKeys: String, CodingKey {
        case family, address
        case prefixLength = "prefix_len"
        case scope
        case isTentative = "tentative"
        case isDADFailed = "dad_failed"
        case isDeprecated = "deprecated"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        address = try c.decode(IPAddress.self, forKey: .address)
        let (maximum, family) = address.family == .ipv4 ? (32, "IPv4") : (128, "IPv6")
        prefixLength = try c.decodeInteger(
            Int.self,
            forKey: .prefixLength,
            in: 0...maximum,
            "an \(family) prefix length"
        )
        scope = try c.decodeIfPresent(Scope.self, forKey: .scope) ?? .global
        isTentative = try c.decodeIfPresent(Bool.self, forKey: .isTentative) ?? false
        isDADFailed = try c.decodeIfPresent(Bool.self, forKey: .isDADFailed) ?? false
        isDeprecated = try c.decodeIfPresent(Bool.self, forKey: .isDeprecated) ?? false
    }

    // EventJSON writes this shape directly for every event's line: change it with this method
    // (EventJSONWriterTests compares the two on generated events).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(family, forKey: .family)
        try c.encode(address, forKey: .address)
        try c.encode(prefixLength, forKey: .prefixLength)
        try c.encode(scope, forKey: .scope)
        if isTentative { try c.encode(true, forKey: .isTentative) }
        if isDADFailed { try c.encode(true, forKey: .isDADFailed) }
        if isDeprecated { try c.encode(true, forKey: .isDeprecated) }
    }
}
