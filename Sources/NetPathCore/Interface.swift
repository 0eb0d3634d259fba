// SPDX-License-Identifier: Apache-2.0

/// One kernel link as netpath sees it: identity, classification, state, addresses and default routes.
///
/// `Interface` is a plain value: construct one in a test with the fields you care about.
///
/// ```swift
/// let eth0 = Interface(index: 2, name: "eth0", type: .wired,
///                      addresses: ["192.0.2.10/24"], defaultRoutes: [.init(via: "192.0.2.1")])
/// ```
public struct Interface: Hashable, Sendable, Identifiable {
    /// The kernel's operational state (RFC 2863), as `ip link` prints it in lower case.
    ///
    /// Complete: these are RFC 2863's `ifOperStatus` values, which the kernel reports and which
    /// have not changed since 2000, so this enum will not grow.
    public enum OperationalState: String, Sendable, Hashable, Codable {
        /// The RFC 2863 states; `up` means the link can pass packets.
        case unknown, notpresent, down, lowerlayerdown, testing, dormant, up
    }

    /// The kernel's interface index; stable for the life of the link.
    public var index: Int32
    /// The interface name; a link can be renamed.
    public var name: String
    /// The classified type.
    public var type: InterfaceType
    /// The netlink link kind or sysfs DEVTYPE (`veth`, `bridge`, `tun`, `wlan`, …); empty for plain hardware.
    public var kind: String
    /// The kernel driver bound to the device, when there is a device.
    public var driver: String
    /// The administrator set the link up (`IFF_UP`).
    public var adminUp: Bool
    /// The lower layer reports carrier (`IFF_LOWER_UP`).
    public var carrier: Bool
    /// The operational state.
    public var operState: OperationalState
    /// The MTU.
    public var mtu: UInt32
    /// The hardware address, lower-case colon-separated; empty when the link has none.
    public var mac: String
    /// Whether traffic on this interface should be treated as costly.
    public var isMetered: Bool
    /// Where ``isMetered`` came from.
    public var meteredReason: MeteredReason
    /// Whether the configuration marks this interface as constrained (low-data mode).
    public var isConstrained: Bool
    /// The configured addresses, sorted.
    public var addresses: [InterfaceAddress]
    /// The default routes leaving through this interface, sorted.
    public var defaultRoutes: [DefaultRoute]
    /// The facts the classification used, in the order they were considered (e.g. `"arptype=1"`).
    public var classifiedBy: [String]
    /// Whether the link reaches the internet, as the agent's connectivity probes found it after
    /// hysteresis (docs/connectivity.md); ``Connectivity/unknown`` when it is not probed.
    public var connectivity: Connectivity
    /// The captive portal's URL, when ``connectivity`` is ``Connectivity/portal``.
    public var portalURL: String?
    /// The round-trip time the last probe measured, when anything answered.
    public var roundTrip: Duration?
    /// The fraction of the last probe's requests that got no answer (0...1), when probed.
    public var loss: Double?
    /// Why ``connectivity`` is what it is: the last probe's evidence (`HTTP 302 to …`), single-line
    /// and escaped; `nil` when the interface was never probed.
    ///
    /// - Important: `unknown` with evidence means a probe ended without a verdict (the probe
    ///   helper failed), and `require_connectivity` holds that against the interface; `unknown`
    ///   without evidence (not probed yet) it does not.
    public var connectivityEvidence: String?

    public var id: Int32 { index }

    /// An interface with these values; only the index and the name are required.
    public init(
        index: Int32,
        name: String,
        type: InterfaceType = .other,
        kind: String = "",
        driver: String = "",
        adminUp: Bool = true,
        carrier: Bool = true,
        operState: OperationalState? = nil,
        mtu: UInt32 = 1500,
        mac: String = "",
        isMetered: Bool = false,
        meteredReason: MeteredReason? = nil,
        isConstrained: Bool = false,
        addresses: [InterfaceAddress] = [],
        defaultRoutes: [DefaultRoute] = [],
        classifiedBy: [String] = [],
        connectivity: Connectivity = .unknown,
        portalURL: String? = nil,
        roundTrip: Duration? = nil,
        loss: Double? = nil,
        connectivityEvidence: String? = nil
    ) {
        self.index = index
        self.name = name
        self.type = type
        self.kind = kind
        self.driver = driver
        self.adminUp = adminUp
        self.carrier = carrier
        self.operState = operState ?? (adminUp && carrier ? .up : (adminUp ? .lowerlayerdown : .down))
        self.mtu = mtu
        self.mac = mac
        self.isMetered = isMetered
        self.meteredReason = meteredReason ?? (type == .cellular && isMetered ? .cellular : .default)
        self.isConstrained = isConstrained
        self.addresses = addresses.sorted()
        self.defaultRoutes = defaultRoutes.sorted()
        self.classifiedBy = classifiedBy
        self.connectivity = connectivity
        self.portalURL = portalURL
        self.roundTrip = roundTrip
        self.loss = loss
        self.connectivityEvidence = connectivityEvidence
    }

    /// Admin up and carrier present: the link could carry traffic.
    public var isConnected: Bool { adminUp && carrier }

    /// Whether the interface has an address a connection of `family` could use.
    public func hasUsableAddress(_ family: IPAddress.Family) -> Bool {
        addresses.contains { $0.family == family && $0.isUsable }
    }

    /// The lowest-metric default route of `family`, in `table` or (`nil`) in any table; on equal
    /// metrics the main table's.
    ///
    /// ``defaultRoutes`` holds the default routes of every table that a routing rule reaches
    /// (`ip rule`), so with policy routing (wg-quick's table 51820, per-uplink tables) an
    /// interface has default routes outside `main` too.
    public func bestDefaultRoute(_ family: IPAddress.Family, table: UInt32? = nil) -> DefaultRoute? {
        // One scan, without a filtered copy: the evaluator and each hook's variables ask on every
        // change. Of equal ones the first is kept, as `min` keeps it.
        func rank(_ route: DefaultRoute) -> (UInt32, Int) {
            (route.metric, route.table == DefaultRoute.mainTable ? 0 : 1)
        }
        var best: DefaultRoute?
        for route in defaultRoutes where route.family == family && (table == nil || route.table == table) {
            if let current = best, rank(current) <= rank(route) { continue }
            best = route
        }
        return best
    }

    /// Whether this interface can carry traffic of `family` by itself: connected, a usable address
    /// of the family, and a default route of the family (in any table a rule reaches).
    package func canRoute(_ family: IPAddress.Family) -> Bool {
        isConnected && hasUsableAddress(family) && defaultRoutes.contains { $0.family == family }
    }

    /// The address families this interface can carry traffic for by itself: connected, a usable
    /// address of the family, and a default route of the family (in any table a rule reaches).
    public var routableFamilies: [IPAddress.Family] {
        [.ipv4, .ipv6].filter { canRoute($0) }
    }

    /// Connected, with a usable address and a default route: what the `up` event means.
    public var isUsable: Bool { canRoute(.ipv4) || canRoute(.ipv6) }
}

extension Interface: Codable {
    enum CodingKeys: String, CodingKey {
        case name, index, type, kind, driver
        case adminUp = "admin_up"
        case carrier
        case operState = "oper_state"
        case mtu, mac
        case isMetered = "metered"
        case meteredReason = "metered_reason"
        case isConstrained = "constrained"
        case addresses
        case defaultRoutes = "default_routes"
        case classifiedBy = "classified_by"
        case connectivity
        case portalURL = "portal_url"
        case roundTrip = "rtt_ms"
        case loss
        case connectivityEvidence = "connectivity_evidence"
    }

    // EventJSON writes this shape directly for every event's line: change it with this method
    // (EventJSONWriterTests compares the two on generated events).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(index, forKey: .index)
        try c.encode(type, forKey: .type)
        try c.encode(kind, forKey: .kind)
        try c.encode(driver, forKey: .driver)
        try c.encode(adminUp, forKey: .adminUp)
        try c.encode(carrier, forKey: .carrier)
        try c.encode(operState, forKey: .operState)
        try c.encode(mtu, forKey: .mtu)
        try c.encode(mac, forKey: .mac)
        try c.encode(isMetered, forKey: .isMetered)
        try c.encode(meteredReason, forKey: .meteredReason)
        try c.encode(isConstrained, forKey: .isConstrained)
        try c.encode(addresses, forKey: .addresses)
        try c.encode(defaultRoutes, forKey: .defaultRoutes)
        try c.encode(classifiedBy, forKey: .classifiedBy)
        try c.encode(connectivity, forKey: .connectivity)
        try c.encode(portalURL, forKey: .portalURL)
        try c.encode(roundTrip.map(\.milliseconds), forKey: .roundTrip)
        try c.encode(loss, forKey: .loss)
        try c.encodeIfPresent(connectivityEvidence, forKey: .connectivityEvidence)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decodeIfPresent(InterfaceType.self, forKey: .type) ?? .other
        let metered = try c.decodeIfPresent(Bool.self, forKey: .isMetered) ?? false
        self.init(
            // The kernel numbers links from 1; 0 and negative indexes never name a link.
            index: try c.decodeInteger(Int32.self, forKey: .index, in: 1...Int32.max, "an interface index"),
            name: try c.decode(String.self, forKey: .name),
            type: type,
            kind: try c.decodeIfPresent(String.self, forKey: .kind) ?? "",
            driver: try c.decodeIfPresent(String.self, forKey: .driver) ?? "",
            adminUp: try c.decodeIfPresent(Bool.self, forKey: .adminUp) ?? true,
            carrier: try c.decodeIfPresent(Bool.self, forKey: .carrier) ?? true,
            operState: try c.decodeIfPresent(OperationalState.self, forKey: .operState),
            mtu: try c.decodeIntegerIfPresent(UInt32.self, forKey: .mtu, "an MTU") ?? 1500,
            mac: try c.decodeIfPresent(String.self, forKey: .mac) ?? "",
            isMetered: metered,
            meteredReason: try c.decodeIfPresent(MeteredReason.self, forKey: .meteredReason),
            isConstrained: try c.decodeIfPresent(Bool.self, forKey: .isConstrained) ?? false,
            addresses: try c.decodeIfPresent([InterfaceAddress].self, forKey: .addresses) ?? [],
            defaultRoutes: try c.decodeIfPresent([DefaultRoute].self, forKey: .defaultRoutes) ?? [],
            classifiedBy: try c.decodeIfPresent([String].self, forKey: .classifiedBy) ?? [],
            // States recorded before connectivity probing have none: unknown, as then.
            connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .connectivity) ?? .unknown,
            portalURL: try c.decodeIfPresent(String.self, forKey: .portalURL),
            roundTrip: try c.decodeIfPresent(Double.self, forKey: .roundTrip).flatMap(Duration.init(milliseconds:)),
            loss: try c.decodeIfPresent(Double.self, forKey: .loss).flatMap { (0...1).contains($0) ? $0 : nil },
            connectivityEvidence: try c.decodeIfPresent(String.self, forKey: .connectivityEvidence)
        )
    }
}

extension DefaultRoute {
    // The synthesized encode(to:) writes these keys, and leaves `gateway` out when it is `nil`;
    // EventJSON writes the same shape directly in `default_routes`: change it with them.
    enum CodingKeys: String, CodingKey {
        case family, gateway, metric, table
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let number = try c.decodeInteger(Int.self, forKey: .family, "an address family")
        guard let family = IPAddress.Family(rawValue: number) else {
            throw DecodingError.dataCorruptedError(
                forKey: .family,
                in: c,
                debugDescription: "expected an address family (4 or 6), found \(number)"
            )
        }
        self.init(
            family: family,
            gateway: try c.decodeIfPresent(IPAddress.self, forKey: .gateway),
            metric: try c.decodeInteger(UInt32.self, forKey: .metric, "a route metric"),
            table: try c.decodeInteger(UInt32.self, forKey: .table, "a routing table")
        )
    }
}
