// SPDX-License-Identifier: Apache-2.0

/// Whether the kernel has a route to one host, and through which interface.
///
/// What `SCNetworkReachability` answered on Apple platforms, computed from the kernel's own
/// answers (`ip route get`, `ip rule` applied): no packet is sent. A ``HostMonitor`` reports one of these per change.
///
/// ```swift
/// let reachability = HostReachability(host: "192.0.2.80", status: .reachable, address: "192.0.2.80",
///                                     interface: .init(name: "eth0", index: 2, type: .wired))
/// if reachability.isReachable, !reachability.isExpensive { startUpload() }
/// ```
public struct HostReachability: Hashable, Sendable, Codable {
    /// The verdict.
    ///
    /// ```swift
    /// if reachability.status == .unresolved { print("check the name") }
    /// ```
    ///
    /// Complete: a host is reachable, unreachable, or has no address to reach, so this enum will
    /// not grow.
    public enum Status: String, Hashable, Sendable, Codable {
        /// A connected interface with a usable address has a route to the host.
        case reachable
        /// The host's addresses are known, but no usable interface routes to any of them.
        case unreachable
        /// The host name has no address (yet): nothing could be looked up. ``unresolvedReason``
        /// says whether its lookup is still under way or failed.
        case unresolved
    }

    /// Why a host name has no address: the lookup is under way, or it failed.
    ///
    /// ```swift
    /// if reachability.unresolvedReason == .lookingUp { showSpinner() }
    /// ```
    ///
    /// Complete: a lookup is under way or failed, so this enum will not grow.
    public enum UnresolvedReason: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The name's first lookup has not answered yet (a slow or unanswering name server);
        /// the answer arrives as a change.
        case lookingUp
        /// The lookup failed; `reason` is the resolver's (`Temporary failure in name resolution`).
        /// It is retried after a while and when the network path changes.
        case failed(reason: String)

        /// One line, control characters escaped: `looking up` or `lookup failed: …`.
        ///
        /// ```swift
        /// print(reachability.unresolvedReason.map(String.init(describing:)) ?? "resolved")
        /// ```
        public var description: String {
            switch self {
            case .lookingUp: "looking up"
            case .failed(let reason): "lookup failed: \(reason.escapingControlCharacters)"
            }
        }
    }

    /// The host as given: a name or an address literal.
    ///
    /// ```swift
    /// print(reachability.host)
    /// ```
    public var host: String
    /// Reachable, unreachable, or unresolved.
    ///
    /// ```swift
    /// guard reachability.status == .reachable else { return }
    /// ```
    public var status: Status
    /// What the host resolved to, in resolver order; empty when ``Status/unresolved``.
    ///
    /// ```swift
    /// let hasIPv6 = reachability.addresses.contains { $0.family == .ipv6 }
    /// ```
    public var addresses: [IPAddress]
    /// The address a connection would go to: the first of ``addresses`` that has a route.
    ///
    /// ```swift
    /// if let address = reachability.address { connect(to: address) }
    /// ```
    public var address: IPAddress?
    /// The interface the kernel would send through.
    ///
    /// ```swift
    /// print(reachability.interface?.name ?? "no route")
    /// ```
    public var interface: NetworkPath.PathInterface?
    /// The next hop, or `nil` when the host is on-link.
    ///
    /// ```swift
    /// let onLink = reachability.isReachable && reachability.gateway == nil
    /// ```
    public var gateway: IPAddress?
    /// The route's prefix length (0 for a default route); `nil` for local delivery (a loopback
    /// address or one of the host's own).
    ///
    /// ```swift
    /// let viaDefaultRoute = reachability.prefixLength == 0
    /// ```
    public var prefixLength: Int?
    /// When ``status`` is ``Status/unresolved``, whether the name is still being looked up or its
    /// lookup failed; `nil` otherwise, and when the source does not say (a scripted answer).
    ///
    /// ```swift
    /// if case .failed(let reason) = reachability.unresolvedReason { print("DNS:", reason) }
    /// ```
    public var unresolvedReason: UnresolvedReason?

    /// A reachability value; `addresses` defaults to `[address]` when an address is given.
    ///
    /// ```swift
    /// let unresolved = HostReachability(host: "nowhere.example", status: .unresolved)
    /// ```
    public init(
        host: String,
        status: Status,
        addresses: [IPAddress]? = nil,
        address: IPAddress? = nil,
        interface: NetworkPath.PathInterface? = nil,
        gateway: IPAddress? = nil,
        prefixLength: Int? = nil,
        unresolvedReason: UnresolvedReason? = nil
    ) {
        self.host = host
        self.status = status
        self.addresses = addresses ?? address.map { [$0] } ?? []
        self.address = address
        self.interface = interface
        self.gateway = gateway
        self.prefixLength = prefixLength
        self.unresolvedReason = unresolvedReason
    }

    /// Whether ``status`` is ``Status/reachable``.
    ///
    /// ```swift
    /// if reachability.isReachable { sync() }
    /// ```
    public var isReachable: Bool { status == .reachable }

    /// The type of the interface the host is reached through.
    ///
    /// ```swift
    /// let overWiFi = reachability.interfaceType == .wifi
    /// ```
    public var interfaceType: InterfaceType? { interface?.type }

    /// Whether the host is reached through a metered interface.
    ///
    /// ```swift
    /// if reachability.isExpensive { deferLargeDownloads() }
    /// ```
    public var isExpensive: Bool { interface?.isMetered ?? false }

    enum CodingKeys: String, CodingKey {
        case host, status, addresses, address, interface, gateway
        case prefixLength = "prefix_len"
        case unresolvedReason = "unresolved_reason"
    }
}

extension HostReachability {
    /// The kernel's choice for `host`, given its resolved `addresses`, the routes covering each
    /// address (``SystemState/TargetRoute`` per interface, as the kernel answers them), and `state`.
    ///
    /// The addresses are tried in order; the first that is local (loopback, or an address of one
    /// of the interfaces: reached through the loopback interface) or that a connected interface
    /// with a usable address of its family routes to wins. Among routes to that address the
    /// kernel's own choice wins (``SystemState/TargetRoute/isKernelChoice``: `ip rule` applied);
    /// without one, longest prefix, then lowest metric (then lowest interface index, for a stable
    /// answer when routes tie).
    ///
    /// ```swift
    /// let verdict = HostReachability.evaluate(host: "198.51.100.7", addresses: ["198.51.100.7"],
    ///                                         state: state) { _ in [.init(interfaceIndex: 2, prefixLength: 24)] }
    /// ```
    public static func evaluate(
        host: String,
        addresses: [IPAddress],
        state: SystemState,
        routes: (IPAddress) -> [SystemState.TargetRoute]
    ) -> HostReachability {
        guard !addresses.isEmpty else { return HostReachability(host: host, status: .unresolved, addresses: []) }
        for address in addresses {
            // The kernel consults the local table before the main one: a loopback address or one
            // of the host's own addresses is delivered through the loopback interface.
            let isLocal =
                address.isLoopback || state.interfaces.contains { $0.addresses.contains { $0.address == address } }
            if isLocal, let loopback = state.interfaces.first(where: { $0.type == .loopback && $0.isConnected }) {
                return HostReachability(
                    host: host,
                    status: .reachable,
                    addresses: addresses,
                    address: address,
                    interface: NetworkPath.PathInterface(loopback)
                )
            }
            let usable = routes(address).compactMap { route -> (SystemState.TargetRoute, Interface)? in
                guard let interface = state.interfaces.first(where: { $0.index == route.interfaceIndex }),
                    interface.isConnected, interface.hasUsableAddress(address.family)
                else { return nil }
                return (route, interface)
            }
            // The kernel's own choice first (rules applied), then longest prefix and lowest metric.
            let best = usable.min { a, b in
                (a.0.isKernelChoice ? 0 : 1, -a.0.prefixLength, a.0.metric, a.1.index)
                    < (b.0.isKernelChoice ? 0 : 1, -b.0.prefixLength, b.0.metric, b.1.index)
            }
            if let (route, interface) = best {
                return HostReachability(
                    host: host,
                    status: .reachable,
                    addresses: addresses,
                    address: address,
                    interface: NetworkPath.PathInterface(interface),
                    gateway: route.gateway,
                    prefixLength: route.prefixLength
                )
            }
        }
        return HostReachability(host: host, status: .unreachable, addresses: addresses)
    }
}
