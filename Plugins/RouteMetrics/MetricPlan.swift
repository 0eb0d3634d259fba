// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathPlugin

/// The pure part of `route-metrics`: which metric each default route should have, and in which
/// order to move routes there so that no move needs a slot another route still holds.
enum MetricPlan {
    /// One metric change: `route` (as it is now) goes to `metric`.
    struct Move: Hashable, Sendable, CustomStringConvertible {
        var route: RouteEntry
        var metric: UInt32
        /// A parking step that breaks a cycle (A wants B's metric and B wants A's).
        var isTemporary: Bool

        var description: String { "\(route) -> \(metric)\(isTemporary ? " (temporary)" : "")" }
    }

    /// The base metric of each interface type, before ranking.
    struct Bases: Hashable, Sendable {
        var wired: UInt32 = 100
        var wifi: UInt32 = 600
        var cellular: UInt32 = 700
        var other: UInt32 = 800

        func base(_ type: InterfaceType) -> UInt32 {
            switch type {
            case .wired: return wired
            case .wifi: return wifi
            case .cellular: return cellular
            default: return other
            }
        }
    }

    /// The metric every main-table default route of `family` should have so that the kernel's
    /// lowest-metric choice is `path`'s primary for that family.
    ///
    /// Interfaces are ranked: the family's primary, then the path's other candidates in
    /// preference order, then every other interface with a default route (by base metric, then
    /// index), because the kernel still uses routes of links that lost carrier. Each route gets
    /// its type's base metric, raised where needed to stay strictly above the route ranked before
    /// it: the primary gets the lowest. Empty when the path has no primary for the family.
    ///
    /// When connectivity is probed, an interface whose probes found less than `full` (`none`,
    /// `limited`, `portal`) is ranked after all the others, as NetworkManager ranks the default
    /// route of a device without full connectivity last; `unknown` (not probed) is not moved.
    static func targets(
        family: IPAddress.Family,
        path: NetworkPath,
        routes: [RouteEntry],
        types: [Int32: InterfaceType],
        bases: Bases,
        connectivity: [Int32: Connectivity] = [:]
    ) -> [RouteEntry: UInt32] {
        let primary = (family == .ipv4 ? path.primaryIPv4 : path.primaryIPv6) ?? path.primary
        let managed = routes.filter { $0.route.family == family && $0.route.table == DefaultRoute.mainTable }
        guard let primary, managed.contains(where: { $0.interfaceIndex == primary.index }) else { return [:] }

        func type(_ index: Int32) -> InterfaceType {
            path.availableInterfaces.first { $0.index == index }?.type ?? types[index] ?? .other
        }
        var ranking: [Int32] = [primary.index]
        for candidate in path.availableInterfaces where !ranking.contains(candidate.index) {
            ranking.append(candidate.index)
        }
        let rest = Set(managed.map(\.interfaceIndex)).subtracting(ranking)
        ranking += rest.sorted { (bases.base(type($0)), $0) < (bases.base(type($1)), $1) }
        func demoted(_ index: Int32) -> Bool {
            let state = connectivity[index] ?? .unknown
            return state != .unknown && state != .full
        }
        ranking = ranking.filter { !demoted($0) } + ranking.filter(demoted)

        var targets: [RouteEntry: UInt32] = [:]
        var previous: UInt32?
        for index in ranking {
            for route in managed.filter({ $0.interfaceIndex == index }).sorted(by: { $0.route.metric < $1.route.metric }
            ) {
                let base = bases.base(type(index))
                let metric = previous.map { max(base, $0 == .max ? .max : $0 + 1) } ?? base
                targets[route] = metric
                previous = metric
            }
        }
        return targets
    }

    /// The moves that bring each route of `targets` (keyed by the route as it is now) to its
    /// metric, in an order where every move's slot is free when it runs; routes in `routes` but
    /// not in `targets` stay where they are.
    ///
    /// - Returns: the moves, and the routes whose target a route that does not move holds.
    static func moves(routes: [RouteEntry], targets: [RouteEntry: UInt32]) -> (moves: [Move], blocked: [RouteEntry]) {
        // Work on identities without the metric; `position` is each route's metric as the moves go.
        var position: [RouteEntry: UInt32] = [:]
        var goal: [RouteEntry: UInt32] = [:]
        for route in routes { position[route.slotless] = route.route.metric }
        for (route, metric) in targets { goal[route.slotless] = metric }
        var pending = goal.keys.filter { position[$0] != goal[$0] }.sorted()
        var moves: [Move] = []

        func holder(of metric: UInt32, like key: RouteEntry) -> RouteEntry? {
            position.first { other, at in
                other != key && at == metric && other.route.family == key.route.family
                    && other.route.table == key.route.table
            }?.key
        }
        func move(_ key: RouteEntry, to metric: UInt32, temporary: Bool) {
            var now = key
            now.route.metric = position[key]!
            moves.append(Move(route: now, metric: metric, isTemporary: temporary))
            position[key] = metric
        }

        while !pending.isEmpty {
            if let ready = pending.first(where: { holder(of: goal[$0]!, like: $0) == nil }) {
                move(ready, to: goal[ready]!, temporary: false)
                pending.removeAll { $0 == ready }
                continue
            }
            // Every pending route wants a taken slot. If one of them sits where another pending
            // route wants to go, park it above everything to free that slot; otherwise only
            // routes that do not move are in the way, and nothing more can be done.
            guard
                let parked = pending.first(where: { key in pending.contains { goal[$0] == position[key] && $0 != key } }
                )
            else {
                break
            }
            let family = position.filter {
                $0.key.route.family == parked.route.family && $0.key.route.table == parked.route.table
            }
            let highest = max(family.values.max() ?? 0, goal.values.max() ?? 0)
            move(parked, to: highest == .max ? .max : highest + 1, temporary: true)
        }
        return (
            moves,
            pending.map { key in
                var now = key
                now.route.metric = position[key]!
                return now
            }
        )
    }
}
