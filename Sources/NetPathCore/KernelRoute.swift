// SPDX-License-Identifier: Apache-2.0

/// The route the kernel would use for traffic from this host to the internet, for one family:
/// what `ip route get` answers for an address on the internet, with `ip rule` applied.
///
/// It is how policy routing becomes visible to path evaluation: a WireGuard tunnel whose default
/// route lives in table 51820 behind an fwmark rule (wg-quick), per-uplink tables with source
/// rules (NetworkManager's and networkd's `RouteTable=`), or a VPN's `0.0.0.0/1` and
/// `128.0.0.0/1` pair are all "where the kernel sends the traffic", whatever the main table says.
/// The interface it names is the primary of a policy that prefers nothing in particular.
public struct KernelRoute: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The address family.
    public var family: IPAddress.Family
    /// The interface the traffic leaves through.
    public var interfaceIndex: Int32
    /// The next hop, or `nil` for an on-link route (a tunnel, a point-to-point modem).
    public var gateway: IPAddress?
    /// The matched route's metric.
    public var metric: UInt32
    /// The table the matched route lives in (254 is `main`).
    public var table: UInt32
    /// The matched route's prefix length: 0 for a default route, 1 for a VPN's half-default.
    public var prefixLength: Int
    /// The rule that sent the lookup to ``table``, when it could be told (see ``RoutingRule``).
    public var rule: RoutingRule?

    /// The route the kernel chose, through the interface with index `interfaceIndex`.
    public init(
        family: IPAddress.Family,
        interfaceIndex: Int32,
        gateway: IPAddress? = nil,
        metric: UInt32 = 0,
        table: UInt32 = DefaultRoute.mainTable,
        prefixLength: Int = 0,
        rule: RoutingRule? = nil
    ) {
        self.family = family
        self.interfaceIndex = interfaceIndex
        self.gateway = gateway
        self.metric = metric
        self.table = table
        self.prefixLength = prefixLength
        self.rule = rule
    }

    /// The destination asked about: an address on the internet that no LAN route covers. No
    /// packet is ever sent to it; the kernel is only asked which route it would take, as an
    /// administrator types `ip route get 8.8.8.8`.
    package static func probe(_ family: IPAddress.Family) -> IPAddress {
        family == .ipv4 ? "8.8.8.8" : "2001:4860:4860::8888"
    }

    /// A table's name as `ip` prints it: `main`, `default`, `local`, or its number.
    package static func tableName(_ table: UInt32) -> String {
        switch table {
        case 253: return "default"
        case DefaultRoute.mainTable: return "main"
        case 255: return "local"
        default: return String(table)
        }
    }

    /// `via 192.0.2.1 metric 100 table main, rule 32766: from all lookup main`.
    public var description: String {
        var text = gateway.map { "via \($0) " } ?? "on-link "
        text += "metric \(metric) table \(Self.tableName(table))"
        if prefixLength != 0 { text += " (a /\(prefixLength) route)" }
        if let rule { text += ", rule \(rule)" }
        return text
    }

    enum CodingKeys: String, CodingKey {
        case family
        case interfaceIndex = "interface_index"
        case gateway, metric, table
        case prefixLength = "prefix_len"
        case rule
    }
}

/// A routing policy rule (`ip rule`), as far as a path needs to show it.
public struct RoutingRule: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The rule's priority (`pref`): rules are tried from the lowest.
    public var priority: UInt32
    /// The rule as `ip rule` prints it after the priority: `not from all fwmark 0xca6c lookup 51820`.
    public var selector: String

    /// A rule with its priority and its `ip rule` text.
    public init(priority: UInt32, selector: String) {
        self.priority = priority
        self.selector = selector
    }

    /// `32765: not from all fwmark 0xca6c lookup 51820`.
    public var description: String { "\(priority): \(selector)" }
}
