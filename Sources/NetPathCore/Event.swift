import FoundationEssentials

/// One transition netpath dispatches: an interface or a path changed.
///
/// Its JSON form (docs/events.md) is versioned and identical on a hook's stdin, on the control
/// socket and in `netpathctl monitor --json`.
public struct Event: Hashable, Sendable {
    /// The JSON schema version.
    public static let version = 1

    /// The values, in one box that copies of the event share until one of them changes.
    ///
    /// An event is handed on by value many times on its way to a hook (to the rule matcher, the
    /// dispatcher's queue, the job, the hook's payload), and it holds a path and an interface
    /// state with their strings and arrays: each copy retained all of them, and each end of a
    /// copy released them (~4,000 instructions of a link change's way to its hook's spawn,
    /// bench/pathcost.sh). A copy is now one retain.
    private struct Fields: Hashable, Sendable {
        var time: Date
        var name: Name
        var scope: Scope
        var interface: String?
        var interfaceType: InterfaceType?
        var policy: String?
        var previousInterface: String?
        var startup: Bool
        var path: NetworkPath?
        var interfaceState: Interface?
        var address: InterfaceAddress?
        var changes: [String]
        var connectivity: Connectivity?
        var previousConnectivity: Connectivity?
    }

    /// The only stored property: `==` and `hash(into:)` are synthesized from it (the box compares
    /// and hashes its values, equal at once when two events share it).
    private var box: CopyOnWriteBox<Fields>

    /// When the change was observed.
    public var time: Date {
        get { box.value.time }
        _modify { yield &box.value.time }
    }
    /// What happened.
    public var name: Name {
        get { box.value.name }
        _modify { yield &box.value.name }
    }
    /// Whether it concerns an interface or a policy's path.
    public var scope: Scope {
        get { box.value.scope }
        _modify { yield &box.value.scope }
    }
    /// The interface: the one concerned, or a path's primary; `nil` for a path without one.
    public var interface: String? {
        get { box.value.interface }
        _modify { yield &box.value.interface }
    }
    /// The type of ``interface``; `nil` when there is no interface.
    public var interfaceType: InterfaceType? {
        get { box.value.interfaceType }
        _modify { yield &box.value.interfaceType }
    }
    /// The policy, for path events.
    public var policy: String? {
        get { box.value.policy }
        _modify { yield &box.value.policy }
    }
    /// The path's previous primary, or an interface's previous name after a rename.
    public var previousInterface: String? {
        get { box.value.previousInterface }
        _modify { yield &box.value.previousInterface }
    }
    /// Part of the state dispatched once at start.
    public var startup: Bool {
        get { box.value.startup }
        _modify { yield &box.value.startup }
    }
    /// The path, for path events.
    public var path: NetworkPath? {
        get { box.value.path }
        _modify { yield &box.value.path }
    }
    /// The interface's state, for interface events.
    public var interfaceState: Interface? {
        get { box.value.interfaceState }
        _modify { yield &box.value.interfaceState }
    }
    /// The address, for `address-added` and `address-removed`.
    public var address: InterfaceAddress? {
        get { box.value.address }
        _modify { yield &box.value.address }
    }
    /// What changed, for `changed` events (e.g. `["mtu", "default_routes"]`).
    public var changes: [String] {
        get { box.value.changes }
        _modify { yield &box.value.changes }
    }
    /// The new connectivity, for `connectivity-changed`.
    public var connectivity: Connectivity? {
        get { box.value.connectivity }
        _modify { yield &box.value.connectivity }
    }
    /// The connectivity before, for `connectivity-changed`.
    public var previousConnectivity: Connectivity? {
        get { box.value.previousConnectivity }
        _modify { yield &box.value.previousConnectivity }
    }

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
        box = CopyOnWriteBox(
            Fields(
                time: time,
                name: name,
                scope: scope,
                interface: interface,
                interfaceType: interfaceType,
                policy: policy,
                previousInterface: previousInterface,
                startup: startup,
                path: path,
                interfaceState: interfaceState,
                address: address,
                changes: changes,
                connectivity: connectivity,
                previousConnectivity: previousConnectivity
            )
        )
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

extension Event: CustomReflectable {
    /// The values, as `print` and `dump` show a plain struct's, not the box they live in.
    public var customMirror: Mirror { box.mirror(of: self) }
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
