// SPDX-License-Identifier: Apache-2.0

/// Everything path evaluation needs to know about the host at one instant.
///
/// The Linux layer fills it from netlink, sysfs and `resolv.conf`; tests and trace replay build it
/// directly. It is the unit `netpathd --record` writes and `netpathctl simulate` replays.
public struct SystemState: Hashable, Sendable, Codable {
    /// How one interface reaches a policy's target: the best route through it that covers the
    /// target, as the kernel answers `ip route get TARGET oif DEV` (`ip rule` applied).
    public struct TargetRoute: Hashable, Sendable, Codable {
        /// The interface the route leaves through.
        public var interfaceIndex: Int32
        /// The route's prefix length: longer is more specific.
        public var prefixLength: Int
        /// The route's metric; lower wins.
        public var metric: UInt32
        /// The next hop, or `nil` for an on-link route.
        public var gateway: IPAddress?
        /// The table the route lives in (254 is `main`).
        public var table: UInt32
        /// Whether this is the interface the kernel itself sends the target's traffic through
        /// (`ip route get TARGET` without an interface): it wins over metrics, as a rule can send
        /// traffic past a lower metric.
        public var isKernelChoice: Bool

        /// A target route with these values.
        public init(
            interfaceIndex: Int32,
            prefixLength: Int,
            metric: UInt32 = 0,
            gateway: IPAddress? = nil,
            table: UInt32 = DefaultRoute.mainTable,
            isKernelChoice: Bool = false
        ) {
            self.interfaceIndex = interfaceIndex
            self.prefixLength = prefixLength
            self.metric = metric
            self.gateway = gateway
            self.table = table
            self.isKernelChoice = isKernelChoice
        }

        enum CodingKeys: String, CodingKey {
            case interfaceIndex = "interface_index"
            case prefixLength = "prefix_len"
            case metric, gateway, table
            case isKernelChoice = "kernel_choice"
        }

        /// Writes the route as JSON; `table` and `kernel_choice` only when they say something.
        public func encode(to encoder: any Encoder) throws {
            // Not main, true: so traces recorded before they existed are written as they were.
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(interfaceIndex, forKey: .interfaceIndex)
            try c.encode(prefixLength, forKey: .prefixLength)
            try c.encode(metric, forKey: .metric)
            try c.encodeIfPresent(gateway, forKey: .gateway)
            if table != DefaultRoute.mainTable { try c.encode(table, forKey: .table) }
            if isKernelChoice { try c.encode(true, forKey: .isKernelChoice) }
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                interfaceIndex: try c.decodeInteger(
                    Int32.self,
                    forKey: .interfaceIndex,
                    in: 1...Int32.max,
                    "an interface index"
                ),
                // The route's family is not recorded: 128 is the longest prefix of either.
                prefixLength: try c.decodeInteger(Int.self, forKey: .prefixLength, in: 0...128, "a prefix length"),
                metric: try c.decodeInteger(UInt32.self, forKey: .metric, "a route metric"),
                gateway: try c.decodeIfPresent(IPAddress.self, forKey: .gateway),
                table: try c.decodeIntegerIfPresent(UInt32.self, forKey: .table, "a routing table")
                    ?? DefaultRoute.mainTable,
                isKernelChoice: try c.decodeIfPresent(Bool.self, forKey: .isKernelChoice) ?? false
            )
        }
    }

    /// What is known about reaching one target (a policy's `target`).
    public struct TargetReachability: Hashable, Sendable, Codable {
        /// How far resolving the target's name has got.
        ///
        /// Complete: a lookup is done, under way or failed, so this enum will not grow.
        public enum Resolution: Hashable, Sendable {
            /// ``addresses`` is the answer (or the target is an address).
            case resolved
            /// No answer yet: the name is being looked up.
            case pending
            /// The lookup failed; `reason` is the resolver's (`Temporary failure in name resolution`).
            case failed(reason: String)
        }

        /// The addresses the target resolved to; empty while it is unresolved.
        public var addresses: [IPAddress]
        /// The routes covering the target, at most one per interface.
        public var routes: [TargetRoute]
        /// Whether the name resolved: when it did not, ``addresses`` is empty and this says why.
        public var resolution: Resolution

        /// - Parameter resolution: `nil` means ``Resolution/resolved`` with addresses, and
        ///   ``Resolution/failed(reason:)`` without.
        public init(addresses: [IPAddress], routes: [TargetRoute], resolution: Resolution? = nil) {
            self.addresses = addresses
            self.routes = routes
            self.resolution = resolution ?? (addresses.isEmpty ? .failed(reason: "no address") : .resolved)
        }

        enum CodingKeys: String, CodingKey {
            case addresses, routes, resolution
            case resolutionError = "resolution_error"
        }

        // Traces: "resolution" is written only when the target is unresolved ("pending" or
        // "failed", the latter with "resolution_error"), so traces recorded before it existed
        // read as they always did: no addresses meant a failed lookup.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let addresses = try c.decode([IPAddress].self, forKey: .addresses)
            let routes = try c.decode([TargetRoute].self, forKey: .routes)
            var resolution: Resolution?
            switch try c.decodeIfPresent(String.self, forKey: .resolution) {
            case nil, "resolved":
                break
            case "pending":
                resolution = .pending
            case "failed":
                resolution = .failed(
                    reason: try c.decodeIfPresent(String.self, forKey: .resolutionError) ?? "no address"
                )
            case let other?:
                throw DecodingError.dataCorruptedError(
                    forKey: .resolution,
                    in: c,
                    debugDescription:
                        "expected \"resolved\", \"pending\" or \"failed\", found \"\(other.escapingControlCharacters)\""
                )
            }
            self.init(addresses: addresses, routes: routes, resolution: resolution)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(addresses, forKey: .addresses)
            try c.encode(routes, forKey: .routes)
            switch resolution {
            case .resolved:
                break
            case .pending:
                try c.encode("pending", forKey: .resolution)
            case .failed(let reason):
                try c.encode("failed", forKey: .resolution)
                try c.encode(reason, forKey: .resolutionError)
            }
        }
    }

    /// The interfaces, sorted by index.
    public var interfaces: [Interface]
    /// The configured DNS servers (from `resolv.conf`).
    public var dnsServers: [IPAddress]
    /// Reachability of each policy target, keyed by the target as written in the policy.
    public var targets: [String: TargetReachability]
    /// The routes the kernel would use to the internet, at most one per family (`ip route get`
    /// with `ip rule` applied): empty when unknown, as in traces recorded before they were kept.
    public var kernelRoutes: [KernelRoute]

    /// A state with these values; interfaces are kept sorted by index.
    public init(
        interfaces: [Interface] = [],
        dnsServers: [IPAddress] = [],
        targets: [String: TargetReachability] = [:],
        kernelRoutes: [KernelRoute] = []
    ) {
        self.interfaces = interfaces.sorted { $0.index < $1.index }
        self.dnsServers = dnsServers
        self.targets = targets
        self.kernelRoutes = kernelRoutes.sorted { $0.family < $1.family }
    }

    /// The kernel's route to the internet for `family`, if it has one.
    public func kernelRoute(_ family: IPAddress.Family) -> KernelRoute? {
        kernelRoutes.first { $0.family == family }
    }

    /// The interface with `name`, if present.
    public subscript(name: String) -> Interface? {
        interfaces.first { $0.name == name }
    }

    enum CodingKeys: String, CodingKey {
        case interfaces
        case dnsServers = "dns_servers"
        case targets
        case kernelRoutes = "kernel_routes"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let interfaces = try c.decode([Interface].self, forKey: .interfaces)
        // Interfaces are found by index and by name everywhere after this: two with the same
        // one would make every lookup ambiguous. Checked in file order, before init sorts them,
        // so the error names the element as written.
        var indexes: [Int32: Int] = [:]
        var names: [String: Int] = [:]
        for (i, interface) in interfaces.enumerated() {
            func duplicate(_ key: Interface.CodingKeys, _ what: String, first: Int) -> DecodingError {
                DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: c.codingPath + [CodingKeys.interfaces, ElementKey(i), key],
                        debugDescription: "\(what) is also interfaces[\(first)]'s; each interface needs its own"
                    )
                )
            }
            if let first = indexes[interface.index] {
                throw duplicate(.index, "index \(interface.index)", first: first)
            }
            if let first = names[interface.name] {
                throw duplicate(.name, "name \"\(interface.name)\"", first: first)
            }
            indexes[interface.index] = i
            names[interface.name] = i
        }
        self.init(
            interfaces: interfaces,
            dnsServers: try c.decodeIfPresent([IPAddress].self, forKey: .dnsServers) ?? [],
            targets: try c.decodeIfPresent([String: TargetReachability].self, forKey: .targets) ?? [:],
            kernelRoutes: try c.decodeIfPresent([KernelRoute].self, forKey: .kernelRoutes) ?? []
        )
    }
}

/// An array element's position in a coding path: `interfaces[2]`.
private struct ElementKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
