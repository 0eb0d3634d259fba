// SPDX-License-Identifier: Apache-2.0

/// A default route (destination prefix length 0) that leaves through one interface.
///
/// A multipath default route appears once for each interface it uses.
public struct DefaultRoute: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The main routing table, where default routes normally live.
    public static let mainTable: UInt32 = 254

    /// The address family of the route.
    public var family: IPAddress.Family
    /// The next hop, or `nil` for an on-link (device) route such as a point-to-point modem's.
    public var gateway: IPAddress?
    /// The route's priority (`ip route`'s `metric`); lower wins.
    public var metric: UInt32
    /// The routing table.
    public var table: UInt32

    /// A default route of `family`; without a gateway it is on-link.
    public init(family: IPAddress.Family, gateway: IPAddress? = nil, metric: UInt32 = 0, table: UInt32 = mainTable) {
        self.family = family
        self.gateway = gateway
        self.metric = metric
        self.table = table
    }

    /// A default route via `gateway`, family taken from the gateway.
    public init(via gateway: IPAddress, metric: UInt32 = 0, table: UInt32 = mainTable) {
        self.init(family: gateway.family, gateway: gateway, metric: metric, table: table)
    }

    public var description: String {
        "default" + (gateway.map { " via \($0)" } ?? "") + " metric \(metric)"
            + (table == Self.mainTable ? "" : " table \(table)")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.family, lhs.table, lhs.metric, lhs.gateway?.description ?? "")
            < (rhs.family, rhs.table, rhs.metric, rhs.gateway?.description ?? "")
    }
}
