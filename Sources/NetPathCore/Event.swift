// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// One transition netpath dispatches: an interface or a path changed.
///
/// Its JSON form (docs/events.md) is versioned and identical on a hook's stdin, on the control
/// socket and in `netpathctl monitor --json`.
public struct Event: Hashable, Sendable {
    /// The JSON schema version.
    public static let version = 1

    /// When the change was observed.
    public var time: Date
    /// What happened.
    public var name: Name
    /// Whether it concerns an interface or a policy's path.
    public var scope: Scope
    /// The interface: the one concerned, or a path's primary; `nil` for a path without one.
    public var interface: String?
    /// The type of ``interface``; `nil` when there is no interface.
    public var interfaceType: InterfaceType?
    /// The policy, for path events.
    public var policy: String?
    /// The path's previous primary, or an interface's previous name after a rename.
    public var previousInterface: String?
    /// Part of the state dispatched once at start.
    public var startup: Bool
    /// The path, for path events.
    public var path: NetworkPath?
    /// The interface's state, for interface events.
    public var interfaceState: Interface?
    /// The address, for `address-added` and `address-removed`.
    public var address: InterfaceAddress?
    /// What changed, for `changed` events (e.g. `["mtu", "default_routes"]`).
    public var changes: [String]
    /// The new connectivity, for `connectivity-changed`.
    public var connectivity: Connectivity?
    /// The connectivity before, for `connectivity-changed`.
    public var previousConnectivity: Connectivity?

    /// An event with these values; the optional fields default to absent.
    public init(
        time: Date,
        name: Name,
        scope: Scope,
        interface: String? = nil,
        interfaceType: InterfaceType? = nil,
        policy: String? = nil,
        previousInterface: String? = nil,
        startup: Bool = false,
        path: NetworkPath? = nil,
        interfaceState: Interface? = nil,
        address: InterfaceAddress? = nil,
        changes: [String] = [],
        connectivity: Connectivity? = nil,
        previousConnectivity: Connectivity? = nil
    ) {
        self.time = time
        self.name = name
        self.scope = scope
        self.interface = interface
        self.interfaceType = interfaceType
        self.policy = policy
        self.previousInterface = previousInterface
        self.startup = startup
        self.path = path
        self.interfaceState = interfaceState
        self.address = address
        self.changes = changes
        self.connectivity = connectivity
        self.previousConnectivity = previousConnectivity
    }

    /// Which interface or policy the event is about: events with the same subject are ordered,
    /// and a queued one may be made obsolete by a later one with the same subject.
    public var subject: String {
        switch scope {
        case .interface:
            if let index = interfaceState?.index { return Self.interfaceSubject(index) }
            return "interface:" + (interface ?? "")
        case .path: return "policy:" + (policy ?? "")
        default: return scope.rawValue + ":" + (policy ?? interface ?? "")
        }
    }

    /// `interface:INDEX`, written at once into a small string: the dispatchers ask for an
    /// event's subject on its way to its hook's spawn, and `+` with `String(index)` ran the
    /// library's integer formatting and string appending each time.
    private static func interfaceSubject(_ index: Int32) -> String {
        let prefix: StaticString = "interface:"
        // Up to five digits fit a small string's 15 bytes beside the prefix; any other index is
        // written the plain way.
        guard (0...99_999).contains(index) else { return "interface:" + String(index) }
        return String(unsafeUninitializedCapacity: 15) { out in
            var end = 0
            prefix.withUTF8Buffer { prefix in
                for byte in prefix {
                    out[end] = byte
                    end += 1
                }
            }
            return DecimalDigits.write(Int(index), into: out, at: end)
        }
    }
}

extension Event: Codable {
    enum CodingKeys: String, CodingKey {
        case version, time
        case name = "event"
        case scope, interface
        case interfaceType = "interface_type"
        case policy
        case previousInterface = "previous_interface"
        case startup, path
        case interfaceState = "interface_state"
        case address, changes
        case connectivity
        case previousConnectivity = "previous_connectivity"
    }

    // EventJSON writes this shape directly for every event's line: change it with this method
    // (EventJSONWriterTests compares the two on generated events).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.version, forKey: .version)
        try c.encode(RFC3339.format(time), forKey: .time)
        try c.encode(name, forKey: .name)
        try c.encode(scope, forKey: .scope)
        try c.encode(interface, forKey: .interface)
        try c.encode(interfaceType, forKey: .interfaceType)
        try c.encode(policy, forKey: .policy)
        try c.encode(previousInterface, forKey: .previousInterface)
        try c.encode(startup, forKey: .startup)
        try c.encodeIfPresent(path, forKey: .path)
        try c.encodeIfPresent(interfaceState, forKey: .interfaceState)
        try c.encodeIfPresent(address, forKey: .address)
        if !changes.isEmpty { try c.encode(changes, forKey: .changes) }
        try c.encodeIfPresent(connectivity, forKey: .connectivity)
        try c.encodeIfPresent(previousConnectivity, forKey: .previousConnectivity)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let version = try c.decode(Int.self, forKey: .version)
        guard version == Self.version else {
            throw DecodingError.dataCorruptedError(
                forKey: .version,
                in: c,
                debugDescription: "event version \(version) is not supported (expected \(Self.version))"
            )
        }
        self.init(
            time: try c.decodeRFC3339(forKey: .time),
            name: try c.decode(Name.self, forKey: .name),
            scope: try c.decode(Scope.self, forKey: .scope),
            interface: try c.decodeIfPresent(String.self, forKey: .interface),
            interfaceType: try c.decodeIfPresent(InterfaceType.self, forKey: .interfaceType),
            policy: try c.decodeIfPresent(String.self, forKey: .policy),
            previousInterface: try c.decodeIfPresent(String.self, forKey: .previousInterface),
            startup: try c.decodeIfPresent(Bool.self, forKey: .startup) ?? false,
            path: try c.decodeIfPresent(NetworkPath.self, forKey: .path),
            interfaceState: try c.decodeIfPresent(Interface.self, forKey: .interfaceState),
            address: try c.decodeIfPresent(InterfaceAddress.self, forKey: .address),
            changes: try c.decodeIfPresent([String].self, forKey: .changes) ?? [],
            connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .connectivity),
            previousConnectivity: try c.decodeIfPresent(Connectivity.self, forKey: .previousConnectivity)
        )
    }
}
