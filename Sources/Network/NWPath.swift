// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    package import NetPath

    /// The network path a monitor sees: Apple's `NWPath`, computed on Linux by netpath.
    ///
    /// ```swift
    /// monitor.pathUpdateHandler = { path in
    ///     if path.status == .satisfied, !path.isExpensive { startSync() }
    ///     print(path)   // satisfied (Path is satisfied), interface: eth0[wired], ipv4, dns
    /// }
    /// ```
    ///
    /// A path counts an interface when it is up, has carrier, a usable address and a default
    /// route, and its type is allowed by the monitor (see NetPath's `PathEvaluator`).
    public struct NWPath: Equatable, Sendable, CustomDebugStringConvertible {
        /// Whether the path can be used.
        ///
        /// ```swift
        /// guard path.status == .satisfied else { return showOffline() }
        /// ```
        ///
        /// Apple's cases, exactly: code written for Apple's framework switches over them, so this stays
        /// an enum and grows only when Apple's does.
        public enum Status: Hashable, Sendable {
            /// An allowed interface is up, addressed, and has a route.
            case satisfied
            /// No allowed interface can carry traffic.
            case unsatisfied
            /// An allowed interface is up with carrier but has no usable address yet (DHCP or SLAAC
            /// pending). Apple means a path a connection attempt could bring up (VPN on demand,
            /// cellular activation); Linux has no such thing, and this is the nearest state.
            case requiresConnection
        }

        /// Why a path is unsatisfied, in Apple's terms.
        ///
        /// Linux has none of the per-app denials Apple reports (cellular or Wi-Fi switched off for
        /// the app, local network privacy, an inactive VPN on demand), so a path from this module is
        /// always ``notAvailable``; its ``debugDescription`` gives netpath's own, more specific reason
        /// (no route, required type absent, metered denied, …).
        ///
        /// ```swift
        /// if path.unsatisfiedReason == .cellularDenied { askForCellular() }   // never on Linux
        /// ```
        ///
        /// Apple's cases, exactly: code written for Apple's framework switches over them, so this stays
        /// an enum and grows only when Apple's does.
        public enum UnsatisfiedReason: Hashable, Sendable {
            /// No specific reason: the only one on Linux.
            case notAvailable
            /// Never on Linux: there is no per-app cellular setting.
            case cellularDenied
            /// Never on Linux: there is no per-app Wi-Fi setting.
            case wifiDenied
            /// Never on Linux: there is no local network privacy prompt.
            case localNetworkDenied
            /// Never on Linux: there is no VPN on demand.
            case vpnInactive
        }

        /// Whether the path can be used.
        ///
        /// ```swift
        /// print(path.status)   // satisfied
        /// ```
        public let status: Status
        /// Always ``UnsatisfiedReason/notAvailable`` on Linux (see ``UnsatisfiedReason``).
        ///
        /// ```swift
        /// print(path.unsatisfiedReason)   // notAvailable
        /// ```
        public let unsatisfiedReason: UnsatisfiedReason
        /// The interfaces that can carry the path, in order of preference: the first is the one
        /// traffic uses (the kernel's choice, the lowest-metric default route).
        ///
        /// ```swift
        /// print(path.availableInterfaces.first?.name ?? "none")
        /// ```
        public let availableInterfaces: [NWInterface]
        /// Whether the primary interface is metered: cellular links, USB phone tethers, and any
        /// interface the netpath configuration marks metered. Linux has no system-wide "expensive"
        /// flag; this is netpath's guess from the driver and device type.
        ///
        /// ```swift
        /// if path.isExpensive { deferBackups() }
        /// ```
        public let isExpensive: Bool
        /// Whether the primary interface is constrained. Linux has no Low Data Mode: only a netpath
        /// configuration (`[[interface]]` with `constrained = true`) sets it, and a monitor of this
        /// module evaluates the kernel with no such configuration, so it is `false` here.
        ///
        /// ```swift
        /// if path.isConstrained { useLowResolution() }
        /// ```
        public let isConstrained: Bool
        /// Whether the path has a usable IPv4 address and route.
        ///
        /// ```swift
        /// print(path.supportsIPv4)
        /// ```
        public let supportsIPv4: Bool
        /// Whether the path has a usable global IPv6 address and route.
        ///
        /// ```swift
        /// print(path.supportsIPv6)
        /// ```
        public let supportsIPv6: Bool
        /// Whether a name server from `/etc/resolv.conf` is reachable over the path. No query is
        /// sent: like Apple's, this says a resolver is configured, not that it answers.
        ///
        /// ```swift
        /// print(path.supportsDNS)
        /// ```
        public let supportsDNS: Bool
        /// The gateways of the primary interfaces' default routes (IPv4 first), as host endpoints
        /// with port 0.
        ///
        /// ```swift
        /// for case .hostPort(let host, _) in path.gateways { print("via", host) }
        /// ```
        public let gateways: [NWEndpoint]
        /// Always `nil` for a monitor's path, as on Apple platforms (it is set for connections).
        ///
        /// ```swift
        /// assert(path.localEndpoint == nil)
        /// ```
        public let localEndpoint: NWEndpoint?
        /// Always `nil` for a monitor's path, as on Apple platforms (it is set for connections).
        ///
        /// ```swift
        /// assert(path.remoteEndpoint == nil)
        /// ```
        public let remoteEndpoint: NWEndpoint?
        /// What netpath evaluated; `nil` before a monitor has started. Also makes two paths that
        /// look the same through the properties above differ when something else changed (a second
        /// interface's metric, an IPv6 primary), as Apple's do.
        let path: NetworkPath?

        /// Whether traffic over the path may use an interface of `type`: the primary interface for
        /// IPv4, for IPv6, or overall has it.
        ///
        /// ```swift
        /// if path.usesInterfaceType(.cellular) { pauseDownloads() }
        /// ```
        public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool {
            path?.usesInterfaceType(type.netPathType) ?? false
        }

        /// The path in one line, in the shape Apple prints: the status and why, then the interface
        /// and what the path supports.
        ///
        /// ```swift
        /// print(path)   // satisfied (Path is satisfied), interface: eth0[wired], ipv4, ipv6, dns, uses wired
        /// print(path)   // unsatisfied (No network route)
        /// ```
        public var debugDescription: String {
            guard let path else { return "unsatisfied (Monitor not started)" }
            switch path.status {
            case .unsatisfied:
                return "unsatisfied (\(Self.explain(path.unsatisfiedReason)))"
            case .requiresConnection:
                return "requiresConnection (No usable address yet)"
            case .satisfied:
                var parts = ["satisfied (Path is satisfied)"]
                if let primary = path.primary {
                    parts.append("interface: \(primary.name.escapingControlCharacters)[\(primary.type.rawValue)]")
                }
                let flags = [
                    (supportsIPv4, "ipv4"), (supportsIPv6, "ipv6"), (supportsDNS, "dns"), (isExpensive, "expensive"),
                    (isConstrained, "constrained"),
                ]
                parts += flags.filter(\.0).map(\.1)
                if let primary = path.primary { parts.append("uses \(primary.type.rawValue)") }
                return parts.joined(separator: ", ")
            }
        }

        private static func explain(_ reason: NetworkPath.UnsatisfiedReason?) -> String {
            switch reason {
            case .noInterface, nil: "No network route"
            case .noRoute: "No default route"
            case .onlyProhibitedTypes: "Interface type prohibited"
            case .requiredTypeAbsent: "Required interface type absent"
            case .meteredDenied: "Metered interface denied"
            case .targetUnreachable: "Target unreachable"
            case .targetUnresolved: "Target not resolved"
            case .noConnectivity: "No internet connectivity"
            default: "Unsatisfied (\(reason?.rawValue ?? "unknown"))"
            }
        }
    }

    extension NWPath {
        /// The Apple-shaped view of `path`.
        package init(_ path: NetworkPath) {
            status =
                switch path.status {
                case .satisfied: .satisfied
                case .unsatisfied: .unsatisfied
                case .requiresConnection: .requiresConnection
                }
            unsatisfiedReason = .notAvailable
            availableInterfaces = path.availableInterfaces.map(NWInterface.init)
            isExpensive = path.isExpensive
            isConstrained = path.isConstrained
            supportsIPv4 = path.supportsIPv4
            supportsIPv6 = path.supportsIPv6
            supportsDNS = path.supportsDNS
            gateways = path.gateways.map { .hostPort(host: NWEndpoint.Host($0.description), port: .any) }
            localEndpoint = nil
            remoteEndpoint = nil
            self.path = path
        }

        /// A monitor's path before it has started: unsatisfied, nothing available (as Apple's).
        static let notStarted = NWPath(
            status: .unsatisfied,
            unsatisfiedReason: .notAvailable,
            availableInterfaces: [],
            isExpensive: false,
            isConstrained: false,
            supportsIPv4: false,
            supportsIPv6: false,
            supportsDNS: false,
            gateways: [],
            localEndpoint: nil,
            remoteEndpoint: nil,
            path: nil
        )
    }
#endif
