// SPDX-License-Identifier: Apache-2.0

/// The state of the network path as one policy sees it: the `NWPath` fields, computed on Linux.
///
/// Unlike Apple's `NWPath`, this is a plain value you can construct in a test:
///
/// ```swift
/// let path = NetworkPath(status: .satisfied, availableInterfaces: [.init(name: "eth0", index: 2, type: .wired)])
/// ```
public struct NetworkPath: Hashable, Sendable {
    /// Whether the path can be used.
    ///
    /// Complete: these are `NWPath.Status`'s three, and a new status would change what every
    /// client decides from a path, so this enum will not grow.
    public enum Status: String, Hashable, Sendable, Codable {
        /// At least one interface satisfies the policy.
        case satisfied
        /// No interface satisfies the policy; see ``UnsatisfiedReason``.
        case unsatisfied
        /// An allowed interface is connected but has no usable address yet (e.g. DHCP pending).
        case requiresConnection = "requires-connection"
    }

    /// Why a path is unsatisfied.
    ///
    /// A struct with static members rather than an enum, so that a new reason in a later version
    /// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
    /// text JSON, hook variables and configuration files carry.
    public struct UnsatisfiedReason: RawRepresentable, Hashable, Sendable, Codable, CaseIterable,
        CustomStringConvertible
    {
        /// No allowed interface is connected (admin up with carrier).
        public static let noInterface = Self(.noInterface)
        /// Allowed interfaces are connected and addressed, but none has a default route.
        public static let noRoute = Self(.noRoute)
        /// Every interface present has a type the policy prohibits (some may also lack a required type).
        public static let onlyProhibitedTypes = Self(.onlyProhibitedTypes)
        /// The policy requires types, and no interface of any of them is present: every interface
        /// there is of another type (a `wired` monitor on a Wi-Fi-only box).
        public static let requiredTypeAbsent = Self(.requiredTypeAbsent)
        /// Only metered interfaces could carry the path, and the policy denies metered ones.
        public static let meteredDenied = Self(.meteredDenied)
        /// The policy has a target, and no usable interface routes to it.
        public static let targetUnreachable = Self(.targetUnreachable)
        /// The policy's target is a host name that has no address yet: it is being looked up
        /// (off the agent's loop), or the lookup failed. `netpathctl explain` says which.
        public static let targetUnresolved = Self(.targetUnresolved)
        /// Interfaces could carry the path, but none has the connectivity the policy's
        /// `require_connectivity` asks for (their probes found no internet, only a portal, or failed).
        public static let noConnectivity = Self(.noConnectivity)

        /// Every reason this version knows, in declaration order.
        public static let allCases: [Self] = Value.allCases.map(Self.init)

        /// The text form (`no-interface`).
        public var rawValue: String { value.rawValue }

        /// The reason whose text form is `rawValue`; `nil` for one this version does not know.
        public init?(rawValue: String) {
            guard let value = Value(rawValue: rawValue) else { return nil }
            self.value = value
        }

        /// The Swift name (`noInterface`), as the enum this was printed.
        public var description: String { String(describing: value) }

        private enum Value: String, CaseIterable {
            case noInterface = "no-interface"
            case noRoute = "no-route"
            case onlyProhibitedTypes = "only-prohibited-types"
            case requiredTypeAbsent = "required-type-absent"
            case meteredDenied = "metered-denied"
            case targetUnreachable = "target-unreachable"
            case targetUnresolved = "target-unresolved"
            case noConnectivity = "no-connectivity"
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }
    }

    /// The identity of an interface as a path refers to it (`NWInterface`'s fields).
    public struct PathInterface: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The interface name.
        public var name: String
        /// The kernel's interface index.
        public var index: Int32
        /// The interface type.
        public var type: InterfaceType
        /// Whether the interface is metered.
        public var isMetered: Bool

        /// An interface identity with these values.
        public init(name: String, index: Int32, type: InterfaceType, isMetered: Bool = false) {
            self.name = name
            self.index = index
            self.type = type
            self.isMetered = isMetered
        }

        /// The identity of `interface`.
        public init(_ interface: Interface) {
            self.init(
                name: interface.name,
                index: interface.index,
                type: interface.type,
                isMetered: interface.isMetered
            )
        }

        public var description: String { name }

        // The synthesized encode(to:) writes these keys; EventJSON writes the same shape
        // directly in `interface_details`: change it with them.
        enum CodingKeys: String, CodingKey {
            case name, index, type
            case isMetered = "metered"
        }
    }

    /// The policy this path was evaluated for.
    public var policy: String
    /// Whether the path can be used.
    public var status: Status
    /// Why the path is unsatisfied: set exactly when ``status`` is ``Status/unsatisfied``.
    ///
    /// `nil` when the path is satisfied, and also for ``Status/requiresConnection``: that status
    /// is its own reason (an allowed link is up and waits for an address), as Apple's
    /// `unsatisfiedReason` has no specific reason for it either.
    public var unsatisfiedReason: UnsatisfiedReason?
    /// The interface traffic would use: the first of ``availableInterfaces``.
    public var primary: PathInterface?
    /// The preferred interface for IPv4 traffic.
    public var primaryIPv4: PathInterface?
    /// The preferred interface for IPv6 traffic.
    public var primaryIPv6: PathInterface?
    /// The candidate interfaces, in preference order.
    public var availableInterfaces: [PathInterface]
    /// The primary interface is metered.
    public var isExpensive: Bool
    /// The primary interface is marked constrained in the configuration.
    public var isConstrained: Bool
    /// An interface with a usable IPv4 address and default route carries the path (``primaryIPv4``).
    public var supportsIPv4: Bool
    /// An interface with a usable IPv6 address and default route carries the path (``primaryIPv6``).
    public var supportsIPv6: Bool
    /// A DNS server is configured that the path can reach.
    public var supportsDNS: Bool
    /// The gateways of the primary interfaces' default routes (IPv4 first).
    public var gateways: [IPAddress]
    /// Who evaluated the path, when a library source delivered it; `nil` for a path built by hand
    /// or evaluated by the agent itself. Two paths that differ only here are different paths: a
    /// monitor whose source switches between the agent and the kernel reports the switch.
    public var origin: Origin?
    /// The primary interface's connectivity (docs/connectivity.md); ``Connectivity/unknown``
    /// without a primary, or when it is not probed.
    public var connectivity: Connectivity
    /// The primary's captive portal URL, when ``connectivity`` is ``Connectivity/portal``.
    public var portalURL: String?
    /// The round-trip time the primary's last probe measured.
    public var roundTrip: Duration?
    /// The loss the primary's last probe measured (0...1).
    public var loss: Double?

    /// Who evaluated a path: see ``NetworkPath/origin``.
    ///
    /// Complete: a path is evaluated either in this process or by the agent, so this enum will not grow.
    public enum Origin: String, Hashable, Sendable, Codable {
        /// This process, from the kernel's netlink state (`KernelPathSource`), with this
        /// process's classification: the administrator's interface overrides do not apply.
        case kernel
        /// A running netpathd, over its control socket (`AgentPathSource`): its configuration,
        /// interface overrides (types, metered, constrained) and policies apply.
        case agent
    }

    /// A path with these values; tests and sources build one, evaluation does for the agent.
    public init(
        policy: String = PathPolicy.default.name,
        status: Status,
        unsatisfiedReason: UnsatisfiedReason? = nil,
        primary: PathInterface? = nil,
        primaryIPv4: PathInterface? = nil,
        primaryIPv6: PathInterface? = nil,
        availableInterfaces: [PathInterface] = [],
        isExpensive: Bool? = nil,
        isConstrained: Bool = false,
        supportsIPv4: Bool = false,
        supportsIPv6: Bool = false,
        supportsDNS: Bool = false,
        gateways: [IPAddress] = [],
        origin: Origin? = nil,
        connectivity: Connectivity = .unknown,
        portalURL: String? = nil,
        roundTrip: Duration? = nil,
        loss: Double? = nil
    ) {
        self.policy = policy
        self.status = status
        self.unsatisfiedReason = unsatisfiedReason
        self.primary = primary ?? availableInterfaces.first
        self.primaryIPv4 = primaryIPv4
        self.primaryIPv6 = primaryIPv6
        self.availableInterfaces = availableInterfaces
        self.isExpensive = isExpensive ?? (self.primary?.isMetered ?? false)
        self.isConstrained = isConstrained
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
        self.supportsDNS = supportsDNS
        self.gateways = gateways
        self.origin = origin
        self.connectivity = connectivity
        self.portalURL = portalURL
        self.roundTrip = roundTrip
        self.loss = loss
    }

    /// Whether the path's primary interface (overall, IPv4 or IPv6) has `type`, like `NWPath.usesInterfaceType(_:)`.
    public func usesInterfaceType(_ type: InterfaceType) -> Bool {
        [primary, primaryIPv4, primaryIPv6].contains { $0?.type == type }
    }
}

extension NetworkPath: Codable {
    enum CodingKeys: String, CodingKey {
        case policy, status
        case unsatisfiedReason = "unsatisfied_reason"
        case primary
        case primaryIPv4 = "primary_ipv4"
        case primaryIPv6 = "primary_ipv6"
        case availableInterfaces = "available_interfaces"
        case interfaceDetails = "interface_details"
        case isExpensive = "is_expensive"
        case isConstrained = "is_constrained"
        case supportsIPv4 = "supports_ipv4"
        case supportsIPv6 = "supports_ipv6"
        case supportsDNS = "supports_dns"
        case gateways
        case origin
        case connectivity
        case portalURL = "portal_url"
        case roundTrip = "rtt_ms"
        case loss
    }

    // docs/events.md's shape: interfaces appear by name; `interface_details` carries the rest of the
    // identity (index, type, metered) so that a decoded path equals the encoded one.
    // EventJSON writes this shape directly for every path event's line: change it with this
    // method (EventJSONWriterTests compares the two on generated events).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(policy, forKey: .policy)
        try c.encode(status, forKey: .status)
        try c.encode(unsatisfiedReason, forKey: .unsatisfiedReason)
        try c.encode(primary?.name, forKey: .primary)
        try c.encode(primaryIPv4?.name, forKey: .primaryIPv4)
        try c.encode(primaryIPv6?.name, forKey: .primaryIPv6)
        try c.encode(availableInterfaces.map(\.name), forKey: .availableInterfaces)
        try c.encode(availableInterfaces, forKey: .interfaceDetails)
        try c.encode(isExpensive, forKey: .isExpensive)
        try c.encode(isConstrained, forKey: .isConstrained)
        try c.encode(supportsIPv4, forKey: .supportsIPv4)
        try c.encode(supportsIPv6, forKey: .supportsIPv6)
        try c.encode(supportsDNS, forKey: .supportsDNS)
        try c.encode(gateways, forKey: .gateways)
        try c.encode(connectivity, forKey: .connectivity)
        try c.encode(portalURL, forKey: .portalURL)
        try c.encode(roundTrip.map(\.milliseconds), forKey: .roundTrip)
        try c.encode(loss, forKey: .loss)
        // Only paths a library source delivered have one: the agent's JSON shapes stay as they are.
        try c.encodeIfPresent(origin, forKey: .origin)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let names = try c.decodeIfPresent([String].self, forKey: .availableInterfaces) ?? []
        var known = try c.decodeIfPresent([PathInterface].self, forKey: .interfaceDetails) ?? []
        if known.map(\.name) != names {
            known = names.enumerated().map { PathInterface(name: $1, index: Int32($0), type: .other) }
        }
        func lookup(_ key: CodingKeys) throws -> PathInterface? {
            guard let name = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
            return known.first { $0.name == name } ?? PathInterface(name: name, index: 0, type: .other)
        }
        self.init(
            policy: try c.decodeIfPresent(String.self, forKey: .policy) ?? PathPolicy.default.name,
            status: try c.decode(Status.self, forKey: .status),
            unsatisfiedReason: try c.decodeIfPresent(UnsatisfiedReason.self, forKey: .unsatisfiedReason),
            primary: try lookup(.primary),
            primaryIPv4: try lookup(.primaryIPv4),
            primaryIPv6: try lookup(.primaryIPv6),
            availableInterfaces: known,
            isExpensive: try c.decodeIfPresent(Bool.self, forKey: .isExpensive),
            isConstrained: try c.decodeIfPresent(Bool.self, forKey: .isConstrained) ?? false,
            supportsIPv4: try c.decodeIfPresent(Bool.self, forKey: .supportsIPv4) ?? false,
            supportsIPv6: try c.decodeIfPresent(Bool.self, forKey: .supportsIPv6) ?? false,
            supportsDNS: try c.decodeIfPresent(Bool.self, forKey: .supportsDNS) ?? false,
            gateways: try c.decodeIfPresent([IPAddress].self, forKey: .gateways) ?? [],
            origin: try c.decodeIfPresent(Origin.self, forKey: .origin),
            // Agents older than connectivity probing send none.
            connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .connectivity) ?? .unknown,
            portalURL: try c.decodeIfPresent(String.self, forKey: .portalURL),
            roundTrip: try c.decodeIfPresent(Double.self, forKey: .roundTrip).flatMap(Duration.init(milliseconds:)),
            loss: try c.decodeIfPresent(Double.self, forKey: .loss).flatMap { (0...1).contains($0) ? $0 : nil }
        )
    }
}
