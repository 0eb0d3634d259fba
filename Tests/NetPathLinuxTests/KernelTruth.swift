// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport

@testable import NetPathLinux

/// The kernel's links, addresses and default routes in one canonical text form, read two ways:
/// from `ip -j` (the truth) and from the engine's mirrored table. Equal sets mean the engine is
/// right. Only default routes (every table, every type) are compared: they are all the engine
/// keeps (`np_route_is_kept`).
struct KernelTruth: Equatable, CustomStringConvertible {
    var links: Set<String>
    var addresses: Set<String>
    var routes: Set<String>

    static let routeTypes: [String: UInt8] = [
        "unicast": 1, "local": 2, "broadcast": 3, "anycast": 4, "multicast": 5, "blackhole": 6,
        "unreachable": 7, "prohibit": 8, "throw": 9, "nat": 10,
    ]
    static let tables: [String: UInt32] = ["main": 254, "local": 255, "default": 253]

    /// What `ip -j` reports in `namespace`.
    static func fromIP(_ namespace: NetworkNamespace) throws -> KernelTruth {
        func json(_ args: String...) throws -> [[String: Any]] {
            let text = try namespace.ip(arguments: ["-j"] + args)
            if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return [] }
            guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] else {
                throw TestFailure("ip -j \(args) did not print a JSON array")
            }
            return array
        }
        var indexByName: [String: Int32] = [:]
        var links = Set<String>()
        for link in try json("link", "show") {
            let index = Int32(link["ifindex"] as? Int ?? -1)
            let name = link["ifname"] as? String ?? ""
            indexByName[name] = index
            let flags = link["flags"] as? [String] ?? []
            links.insert(
                linkLine(
                    index,
                    name,
                    up: flags.contains("UP"),
                    carrier: flags.contains("LOWER_UP"),
                    mtu: link["mtu"] as? Int ?? 0,
                    mac: link["address"] as? String ?? ""
                )
            )
        }
        var addresses = Set<String>()
        for link in try json("addr", "show") {
            let index = Int32(link["ifindex"] as? Int ?? -1)
            for info in link["addr_info"] as? [[String: Any]] ?? [] {
                addresses.insert("\(index) \(info["local"] as? String ?? "?")/\(info["prefixlen"] as? Int ?? -1)")
            }
        }
        var routes = Set<String>()
        for (family, flag) in [(IPAddress.Family.ipv4, "-4"), (.ipv6, "-6")] {
            for route in try json(flag, "route", "show", "table", "all") {
                let type = routeTypes[route["type"] as? String ?? "unicast"] ?? 0
                let tableName = route["table"] as? String ?? "main"
                let table = tables[tableName] ?? UInt32(tableName) ?? 0
                let dst = route["dst"] as? String ?? "default"
                guard dst == "default" else { continue }
                let destination: String
                if dst == "default" {
                    destination = family == .ipv4 ? "0.0.0.0/0" : "::/0"
                } else if dst.contains("/") {
                    destination = dst
                } else {
                    destination = "\(dst)/\(family == .ipv4 ? 32 : 128)"
                }
                var hops: [String] = []
                if let nexthops = route["nexthops"] as? [[String: Any]] {
                    for hop in nexthops {
                        hops.append(hopLine(indexByName[hop["dev"] as? String ?? ""] ?? 0, hop["gateway"] as? String))
                    }
                } else if let dev = route["dev"] as? String {
                    hops.append(hopLine(indexByName[dev] ?? 0, route["gateway"] as? String))
                }
                let tos =
                    UInt8(route["tos"] as? String ?? "0", radix: 16) ?? (route["tos"] as? Int).map(UInt8.init) ?? 0
                routes.insert(routeLine(family, table, type, destination, route["metric"] as? Int ?? 0, tos, hops))
            }
        }
        return KernelTruth(links: links, addresses: addresses, routes: routes)
    }

    /// What the engine's table holds.
    static func fromEngine(_ table: KernelTable) -> KernelTruth {
        let links = Set(
            table.links.values.map {
                linkLine($0.index, $0.name, up: $0.adminUp, carrier: $0.carrier, mtu: Int($0.mtu), mac: $0.mac)
            }
        )
        let addresses = Set(
            table.addresses.values.map { "\($0.index) \($0.address.address)/\($0.address.prefixLength)" }
        )
        let routes = Set(
            table.routes.values.map { route in
                let destination =
                    route.destination.map { "\($0)/\(route.destinationLength)" }
                    ?? (route.family == .ipv4 ? "0.0.0.0/0" : "::/0")
                return routeLine(
                    route.family,
                    route.table,
                    route.type,
                    destination,
                    Int(route.metric),
                    route.tos,
                    route.nexthops.map { hopLine($0.interfaceIndex, $0.gateway?.description) }
                )
            }
        )
        return KernelTruth(links: links, addresses: addresses, routes: routes)
    }

    static func linkLine(_ index: Int32, _ name: String, up: Bool, carrier: Bool, mtu: Int, mac: String) -> String {
        "\(index) \(name) up=\(up) carrier=\(carrier) mtu=\(mtu) mac=\(mac)"
    }

    static func hopLine(_ index: Int32, _ gateway: String?) -> String {
        "dev \(index)" + (gateway.map { " via \($0)" } ?? "")
    }

    static func routeLine(
        _ family: IPAddress.Family,
        _ table: UInt32,
        _ type: UInt8,
        _ destination: String,
        _ metric: Int,
        _ tos: UInt8,
        _ hops: [String]
    ) -> String {
        "v\(family.rawValue) table \(table) type \(type) \(destination) metric \(metric) tos \(tos) [\(hops.sorted().joined(separator: ", "))]"
    }

    /// Lines only in `self` (−) or only in `other` (+), for failure messages.
    func difference(from other: KernelTruth) -> String {
        var out: [String] = []
        for (name, mine, theirs) in [
            ("link", links, other.links), ("addr", addresses, other.addresses), ("route", routes, other.routes),
        ] {
            for line in mine.subtracting(theirs).sorted().prefix(20) { out.append("  - \(name) \(line)") }
            for line in theirs.subtracting(mine).sorted().prefix(20) { out.append("  + \(name) \(line)") }
        }
        return out.joined(separator: "\n")
    }

    var description: String { "\(links.count) links, \(addresses.count) addresses, \(routes.count) routes" }
}

extension Recorder where Element == KernelSnapshot {
    /// Waits until the engine's table equals what `ip -j` reports, re-checking after every
    /// snapshot; fails with the difference (− kernel only, + engine only) at the deadline.
    func awaitMirror(
        of namespace: NetworkNamespace,
        engine: NetlinkEngine,
        _ step: String,
        timeout: Duration = .seconds(10)
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        var truth = try KernelTruth.fromIP(namespace)
        var mine = KernelTruth.fromEngine(engine.table())
        while truth != mine {
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                throw TestFailure(
                    "after \(step): engine state differs from `ip -j` (− kernel only, + engine only):\n\(truth.difference(from: mine))"
                )
            }
            // A new snapshot means the engine applied something; the kernel may also still be
            // settling (DAD, route re-adds), so both sides are read again after each one.
            _ = try? await next("a snapshot after \(step)", timeout: min(left, .milliseconds(500)))
            truth = try KernelTruth.fromIP(namespace)
            mine = KernelTruth.fromEngine(engine.table())
        }
        // The snapshot's per-interface maps, which the engine keeps from one publication to the
        // next while routing stays the same, are the table's.
        while true {
            let (snapshot, table) = (engine.snapshot(), engine.table())
            let (addresses, routes) = (table.addressesByInterface(), table.defaultRoutesByInterface())
            if snapshot.addresses.mapValues(Set.init) == addresses.mapValues(Set.init)
                && snapshot.defaultRoutes.mapValues(Set.init) == routes.mapValues(Set.init)
            {
                return
            }
            if ContinuousClock.now >= deadline {
                throw TestFailure(
                    "after \(step): the snapshot's maps are not the table's: addresses \(snapshot.addresses) against \(addresses), default routes \(snapshot.defaultRoutes) against \(routes)"
                )
            }
            _ = try? await next("a snapshot after \(step)", timeout: .milliseconds(100))
        }
    }
}
