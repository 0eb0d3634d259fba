// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// The kernel's links, addresses, rules and default routes, mirrored from rtnetlink messages.
///
/// Only default routes are kept (of every table and type): they are all the path model reads;
/// and the few routes that cover an internet probe (``KernelRoute/probe(_:)``), so that a change
/// that can move the kernel's route to the internet is seen (``probeGeneration``). The engine
/// drops other routes before parsing them (`np_walk`); a table fed by hand ignores them in the
/// same way (``RouteRecord/isKept``), so its size never grows with routes it does not use.
///
/// Pure state: ``apply(_:)`` takes one message and mirrors its effect, including the effects the
/// kernel does not announce (libnl-facts.md, "Kernel gaps"):
/// - IPv4 routes through a link vanish without `RTM_DELROUTE` when the link goes admin-down or is
///   deleted, when its last IPv4 address is removed, and when their preferred source is removed;
/// - `NLM_F_REPLACE` replaces the route in the same slot (family, table, tos, destination, metric);
/// - losing carrier removes nothing.
///
/// Routing rules (`ip rule`) are kept too: they decide which tables' default routes count
/// (``defaultRoutesByInterface()``) and which rule a lookup went through (``rule(choosing:)``).
package struct KernelTable: Sendable, Equatable {
    package private(set) var links: [Int32: LinkRecord] = [:]
    package private(set) var addresses: [AddressRecord.Key: AddressRecord] = [:]
    package private(set) var routes: [RouteRecord.Key: RouteRecord] = [:]
    /// The keys of default routes, kept apart so a snapshot never scans the whole table.
    package private(set) var defaultRouteKeys: Set<RouteRecord.Key> = []
    /// The routing rules of both families.
    package private(set) var rules: Set<RuleRecord> = []
    /// ``reachableTables(_:)`` of IPv4 and IPv6, computed when the rules change, not at every
    /// snapshot.
    private var reachable = [Self.reachableTables(.ipv4, among: []), Self.reachableTables(.ipv6, among: [])]
    /// Which links are mirrored; the others are only listed in ``ignoredLinks``.
    package private(set) var filter: LinkFilter
    /// The links ``filter`` ignores, by index: a name and a reason each, nothing else. Their
    /// addresses and later link messages are dropped on arrival, and change nothing a snapshot
    /// shows (`status` reads this list from the engine when asked).
    package private(set) var ignoredLinks: [Int32: IgnoredLink] = [:]
    /// Set when a link the filter ignored became one it mirrors (renamed out of a glob): its
    /// addresses were dropped on arrival, so only a new dump has them. The engine re-dumps.
    package private(set) var needsDump = false

    /// An empty table that mirrors the links `filter` does not ignore.
    package init(filter: LinkFilter = .none) {
        self.filter = filter
    }

    /// Counts the changes that can change where the kernel routes traffic: a route, a rule or an
    /// address, a link that appears, goes away or changes its admin state. Carrier alone does not
    /// (the kernel keeps a route whose link lost carrier), so the engine need not ask the kernel
    /// again (``RouteLookup``) after a carrier flip.
    package private(set) var routingGeneration: UInt64 = 0

    /// Counts the changes to the kept routes and the rules: the only changes that can move the
    /// kernel's route to the internet (``KernelRoute/probe(_:)``). A link's admin state or an
    /// address alone cannot: routes the kernel flushes with them are flushed here too.
    package private(set) var probeGeneration: UInt64 = 0

    /// Applies one message; returns whether anything a snapshot shows changed. A route that is
    /// not kept (``RouteRecord/isKept``) changes nothing.
    @discardableResult
    package mutating func apply(_ message: KernelMessage) -> Bool {
        if !filter.list.isEmpty || !ignoredLinks.isEmpty, let handled = ignoring(message) { return handled }
        let routing: Bool
        if case .newLink(let link) = message {
            routing = links[link.index]?.adminUp != link.adminUp
        } else {
            routing = true
        }
        let changed = mirror(message)
        if changed && routing { routingGeneration &+= 1 }
        return changed
    }

    /// The messages of ignored links, handled here: `nil` for every other message, which the
    /// mirror takes. A link is judged when it first appears and when its name or kind changes.
    private mutating func ignoring(_ message: KernelMessage) -> Bool? {
        switch message {
        case .newLink(let link):
            if let known = ignoredLinks[link.index], known.name == link.name, known.kind == link.kind { return false }
            if let mirrored = links[link.index], mirrored.name == link.name, mirrored.kind == link.kind { return nil }
            guard let entry = filter.ignores(link) else {
                if ignoredLinks.removeValue(forKey: link.index) != nil { needsDump = true }
                return nil
            }
            ignoredLinks[link.index] = IgnoredLink(name: link.name, kind: link.kind, entry: entry)
            // A mirrored link renamed into the list leaves the mirror as if deleted.
            guard links[link.index] != nil else { return false }
            _ = mirror(.deleteLink(index: link.index))
            routingGeneration &+= 1
            return true
        case .deleteLink(let index):
            return ignoredLinks.removeValue(forKey: index) != nil ? false : nil
        case .newAddress(let record), .deleteAddress(let record):
            return ignoredLinks[record.index] != nil ? false : nil
        case .newRoute, .deleteRoute, .newRule, .deleteRule:
            // Only default routes and those covering a probe reach the table: none is dropped for
            // its link, so the kernel's route to the internet stays whole.
            return nil
        }
    }

    private mutating func mirror(_ message: KernelMessage) -> Bool {
        switch message {
        case .newLink(let link):
            let old = links.updateValue(link, forKey: link.index)
            if let old, old.adminUp, !link.adminUp {
                // The kernel keeps the `local` routes of the link's own addresses (table local).
                removeRoutes {
                    $0.family == .ipv4 && $0.type != RouteRecord.localType && $0.uses(interface: link.index)
                }
            }
            return old != link
        case .deleteLink(let index):
            guard links.removeValue(forKey: index) != nil else { return false }
            addresses = addresses.filter { $0.value.index != index }
            removeRoutes { $0.uses(interface: index) }
            return true
        case .newAddress(let record):
            return addresses.updateValue(record, forKey: record.key) != record
        case .deleteAddress(let record):
            guard addresses.removeValue(forKey: record.key) != nil else { return false }
            if record.address.family == .ipv4 {
                let address = record.address.address
                removeRoutes { $0.family == .ipv4 && $0.preferredSource == address }
                let hasIPv4 = addresses.values.contains { $0.index == record.index && $0.address.family == .ipv4 }
                if !hasIPv4 {
                    removeRoutes { $0.family == .ipv4 && $0.uses(interface: record.index) }
                }
            }
            return true
        case .newRoute(let route, _) where !route.isKept, .deleteRoute(let route) where !route.isKept:
            return false
        case .newRoute(let route, let replace):
            let slot = route.slot
            if replace {
                removeRoutes { $0.slot == slot }
            } else if route.family == .ipv6 && route.nexthops.count > 1 {
                // IPv6 merges same-metric gateway routes into one multipath route and announces
                // the whole of it: the single-hop entries it absorbed must go.
                let hops = Set(route.nexthops)
                removeRoutes { $0.slot == slot && $0.type == route.type && Set($0.nexthops).isSubset(of: hops) }
            }
            return insert(route)
        case .deleteRoute(let route):
            if remove(route.key) { return true }
            // A deletion can name fewer attributes than the stored route: no next hop at all, or
            // one sibling of an IPv6 multipath route. Match by slot, then by the hops it names.
            let slot = route.slot
            let hops = Set(route.nexthops)
            guard let match = routes.values.first(where: { $0.slot == slot && hops.isSubset(of: Set($0.nexthops)) })
            else {
                return false
            }
            remove(match.key)
            if !hops.isEmpty && match.nexthops.count > hops.count {
                var shrunk = match
                shrunk.nexthops.removeAll { hops.contains($0) }
                _ = insert(shrunk)
            }
            return true
        case .newRule(let rule):
            guard rules.insert(rule).inserted else { return false }
            rulesChanged()
            return true
        case .deleteRule(let rule):
            guard rules.remove(rule) != nil else { return false }
            rulesChanged()
            return true
        }
    }

    /// After a rule came or went: the reachable tables follow, and the route to the internet
    /// may have moved.
    private mutating func rulesChanged() {
        reachable = [Self.reachableTables(.ipv4, among: rules), Self.reachableTables(.ipv6, among: rules)]
        probeGeneration &+= 1
    }

    /// The number of routes held: default routes and routes covering a probe.
    package var routeCount: Int { routes.count }

    /// The default routes through each interface, in every table a rule of their family looks
    /// up: a default route in a table no rule reaches carries no traffic.
    package func defaultRoutesByInterface() -> [Int32: [DefaultRoute]] {
        var result: [Int32: [DefaultRoute]] = [:]
        for key in defaultRouteKeys {
            guard let route = routes[key], route.isUnicast,
                reachable[route.family == .ipv4 ? 0 : 1].contains(route.table)
            else { continue }
            for hop in route.nexthops {
                result[hop.interfaceIndex, default: []].append(
                    DefaultRoute(family: route.family, gateway: hop.gateway, metric: route.metric, table: route.table)
                )
            }
        }
        return result
    }

    /// The tables that a rule of `family` looks up (`lookup TABLE`), whatever its selectors.
    ///
    /// With no rules known for the family (a table built by hand, or a kernel that reports none),
    /// the kernel's default rules are assumed: `main` and `default`.
    package func reachableTables(_ family: IPAddress.Family) -> Set<UInt32> {
        reachable[family == .ipv4 ? 0 : 1]
    }

    private static func reachableTables(_ family: IPAddress.Family, among rules: Set<RuleRecord>) -> Set<UInt32> {
        let own = rules.filter { $0.family == family }
        guard !own.isEmpty else { return [DefaultRoute.mainTable, 253] }
        return Set(own.filter { $0.action == .toTable && !$0.l3mdev }.map(\.table))
    }

    /// The rule that sent plain traffic to `route`'s table, walking the rules as the kernel does
    /// for `ip route get` (``RuleRecord/matchesPlainTraffic(to:)``): the first `lookup` of that
    /// table whose `suppress_prefixlength` would not have discarded the route. `nil` when no
    /// rule explains it (selectors the walk cannot evaluate, such as a goto loop).
    package func rule(choosing route: KernelRoute) -> RuleRecord? {
        Self.rule(choosing: route, among: rules)
    }

    /// ``rule(choosing:)`` over a set of rules taken out of a table: the engine explains the
    /// kernel's answer with a copy of the few rules, never of the whole (route-holding) table.
    static func rule(choosing route: KernelRoute, among rules: Set<RuleRecord>) -> RuleRecord? {
        let ordered = rules.filter { $0.family == route.family }.sorted { $0.priority < $1.priority }
        let probe = KernelRoute.probe(route.family)
        var index = 0
        var steps = 0
        while index < ordered.count, steps <= ordered.count {
            let rule = ordered[index]
            steps += 1
            index += 1
            guard rule.matchesPlainTraffic(to: probe) else { continue }
            switch rule.action {
            case .toTable:
                if rule.table == route.table, route.prefixLength > (rule.suppressPrefixLength ?? -1) { return rule }
            case .goto:
                // Jump to the first rule at or after the target priority; never backwards.
                guard let next = ordered.firstIndex(where: { $0.priority >= rule.gotoTarget }), next >= index else {
                    return nil
                }
                index = next
            case .nop, .unspecified:
                continue
            case .blackhole, .unreachable, .prohibit:
                return nil
            }
        }
        return nil
    }

    /// The addresses of each interface.
    package func addressesByInterface() -> [Int32: [InterfaceAddress]] {
        var result: [Int32: [InterfaceAddress]] = [:]
        for record in addresses.values { result[record.index, default: []].append(record.address) }
        return result
    }

    /// The interfaces that could carry traffic of `family`: admin up, not loopback, with an
    /// address of the family. Carrier is not required: a route through a link that lost it stays
    /// (the answer must not depend on what does not move the routing generation).
    package func candidateInterfaces(for family: IPAddress.Family) -> [Int32] {
        var indices = Set<Int32>()
        for record in addresses.values where record.address.family == family {
            guard let link = links[record.index], link.adminUp, !link.isLoopback else { continue }
            indices.insert(record.index)
        }
        return indices.sorted()
    }

    private mutating func insert(_ route: RouteRecord) -> Bool {
        let key = route.key
        let old = routes.updateValue(route, forKey: key)
        if route.isDefault { defaultRouteKeys.insert(key) }
        if old != route { probeGeneration &+= 1 }
        return old != route
    }

    @discardableResult
    private mutating func remove(_ key: RouteRecord.Key) -> Bool {
        guard routes.removeValue(forKey: key) != nil else { return false }
        defaultRouteKeys.remove(key)
        probeGeneration &+= 1
        return true
    }

    private mutating func removeRoutes(where predicate: (RouteRecord) -> Bool) {
        let doomed = routes.values.filter(predicate).map(\.key)
        for key in doomed { remove(key) }
    }
}
