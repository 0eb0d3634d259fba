// SPDX-License-Identifier: Apache-2.0

/// One NWPathMonitor-like requirement: which interfaces may carry the path and which is preferred.
///
/// ```swift
/// let policy = PathPolicy(name: "uplink", require: [.wired, .wifi], metered: .avoid, prefer: [.wired])
/// ```
public struct PathPolicy: Hashable, Sendable, Codable {
    /// How metered interfaces are treated.
    ///
    /// Complete: a metered interface is allowed, avoided or denied, so this enum will not grow.
    public enum MeteredMode: String, Hashable, Sendable, Codable, CaseIterable {
        /// Metered interfaces count like any other.
        case allow
        /// Metered interfaces are used only when nothing unmetered is available.
        case avoid
        /// Metered interfaces are never used.
        case deny
    }

    /// The policy's name, reported in paths and events.
    public var name: String
    /// Allowed interface types; empty means any.
    public var require: [InterfaceType]
    /// Prohibited interface types.
    public var prohibit: [InterfaceType]
    /// The treatment of metered interfaces.
    public var metered: MeteredMode
    /// Preference order among candidates; the first type present wins, then the route metric.
    /// Empty means the kernel's own choice (lowest metric).
    public var prefer: [InterfaceType]
    /// A host name or address; when set, only interfaces that route to it count.
    public var target: String?
    /// The connectivity an interface needs to be a candidate (`require_connectivity`): `full`,
    /// or `portal` to accept a captive portal too; `nil` (the default) asks for none. An
    /// interface whose state is ``Connectivity/unknown`` because it is not probed yet (or not
    /// probed) is not held to it; one whose probe failed is (docs/connectivity.md).
    public var requireConnectivity: Connectivity?

    /// A policy with these values; the defaults allow every interface type.
    public init(
        name: String = "default",
        require: [InterfaceType] = [],
        prohibit: [InterfaceType] = [],
        metered: MeteredMode = .allow,
        prefer: [InterfaceType] = [],
        target: String? = nil,
        requireConnectivity: Connectivity? = nil
    ) {
        self.name = name
        self.require = require
        self.prohibit = prohibit
        self.metered = metered
        self.prefer = prefer
        self.target = target.flatMap { $0.isEmpty ? nil : $0 }
        self.requireConnectivity = requireConnectivity
    }

    enum CodingKeys: String, CodingKey {
        case name, require, prohibit, metered, prefer, target
        case requireConnectivity = "require_connectivity"
    }

    /// The policy used when the configuration names none: any interface, metered allowed, the
    /// kernel's choice of primary.
    public static let `default` = PathPolicy()
}
