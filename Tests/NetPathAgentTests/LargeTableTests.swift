// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import NetPathControl
import TestSupport
import Testing

/// A table of 200,000 routes in several tables (issue 14): the agent keeps only the default
/// routes, yet what it reports agrees with `ip` on every one of them, and a policy `target`
/// behind a specific route or behind an `ip rule` resolves as `ip route get` resolves it.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"), .serialized)
struct LargeTableTests {
    /// Behind a specific route in main (`198.51.100.0/24 via 10.2.0.9 dev up1`), although up0
    /// has the lower default metric.
    static let specificTarget = "198.51.100.7"
    /// Behind `ip rule add to 203.0.113.5 lookup 100`; table 100's default goes via up1.
    static let ruledTarget = "203.0.113.5"

    static let config = """
        [agent]
        settle = "0s"
        metrics = ""

        [[policy]]
        name = "specific"
        target = "\(specificTarget)"

        [[policy]]
        name = "ruled"
        target = "\(ruledTarget)"
        """

    /// 200,000 /32 routes: half in main via up1, a quarter each in tables 100 and 200; then the
    /// default routes of tables 100, 200 and 300 (300: no rule reaches it) for both families.
    static func batch() -> [String] {
        var lines: [String] = []
        for i in 0..<200_000 {
            let address = "10.\(100 + (i >> 16)).\((i >> 8) & 0xff).\(i & 0xff)/32"
            switch i % 4 {
            case 0, 1: lines.append("route add \(address) via 10.2.0.1 dev up1")
            case 2: lines.append("route add \(address) via 10.1.0.1 dev up0 table 100")
            default: lines.append("route add \(address) via 10.2.0.1 dev up1 table 200")
            }
        }
        lines += [
            "route add default via 10.2.0.1 dev up1 table 100",
            "route add default via 10.1.0.1 dev up0 table 200 metric 7",
            "route add default via 10.2.0.1 dev up1 table 300",
            "route add ::/0 via fd02::1 dev up1 table 100",
            "route add ::/0 via fd01::1 dev up0 table 200",
            "route add 198.51.100.0/24 via 10.2.0.9 dev up1",
        ]
        return lines
    }

    /// Every default route `ip -j route show table all` lists in a table some rule looks up, as
    /// "DEV FAMILY table N via GW metric M" lines: what the agent must report, no more, no less.
    static func kernelDefaultRoutes(_ ns: NetworkNamespace) throws -> Set<String> {
        func json(_ arguments: String...) throws -> [[String: Any]] {
            let text = try ns.ip(arguments: ["-j"] + arguments)
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
        }
        let tableNumbers: [String: UInt32] = ["main": 254, "default": 253, "local": 255]
        var lines = Set<String>()
        for family in ["-4", "-6"] {
            let reachable = Set(
                try json(family, "rule", "show").compactMap { rule -> UInt32? in
                    guard let table = rule["table"] as? String else { return nil }
                    return tableNumbers[table] ?? UInt32(table)
                }
            )
            for route in try json(family, "route", "show", "table", "all") where route["dst"] as? String == "default" {
                let tableName = route["table"] as? String ?? "main"
                let table = tableNumbers[tableName] ?? UInt32(tableName) ?? 0
                guard reachable.contains(table), route["type"] == nil || route["type"] as? String == "unicast",
                    let dev = route["dev"] as? String
                else { continue }
                let gateway = route["gateway"] as? String ?? "-"
                lines.insert("\(dev) \(family) table \(table) via \(gateway) metric \(route["metric"] as? Int ?? 0)")
            }
        }
        return lines
    }

    /// The same lines from a status report.
    static func reportedDefaultRoutes(_ report: StatusReport) -> Set<String> {
        var lines = Set<String>()
        for interface in report.interfaces {
            for route in interface.defaultRoutes {
                let family = route.family == .ipv4 ? "-4" : "-6"
                lines.insert(
                    "\(interface.name) \(family) table \(route.table) via \(route.gateway?.description ?? "-") metric \(route.metric)"
                )
            }
        }
        return lines
    }

    /// `ip route get ADDRESS`: the device and gateway the kernel would use.
    static func routeGet(_ ns: NetworkNamespace, _ address: String) throws -> (dev: String, gateway: String?) {
        let text = try ns.ip("-j", "route", "get", address)
        let route = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])?.first)
        return (try #require(route["dev"] as? String), route["gateway"] as? String)
    }

    /// What `report` disagrees with the kernel about, or `nil` when it agrees on every default
    /// route and on both targets' interface and gateway.
    static func disagreement(_ report: StatusReport, _ ns: NetworkNamespace) throws -> String? {
        var problems: [String] = []
        let kernel = try kernelDefaultRoutes(ns)
        let reported = reportedDefaultRoutes(report)
        if kernel != reported {
            problems.append(
                "default routes: kernel only \(kernel.subtracting(reported).sorted()), "
                    + "reported only \(reported.subtracting(kernel).sorted())"
            )
        }
        for (policy, target) in [("specific", specificTarget), ("ruled", ruledTarget)] {
            let expected = try routeGet(ns, target)
            let path = report.paths.first { $0.policy == policy }
            let gateways = path?.gateways.map(\.description) ?? []
            if path?.primary?.name != expected.dev || gateways != (expected.gateway.map { [$0] } ?? []) {
                problems.append(
                    "\(policy) (\(target)): ip route get says dev \(expected.dev) via \(expected.gateway ?? "-"), "
                        + "the report \(path?.primary?.name ?? "no primary") via \(gateways)"
                )
            }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Checks that the set-up makes `ip route get ADDRESS` answer `dev` via `gateway`.
    static func expectRoute(_ ns: NetworkNamespace, _ address: String, _ dev: String, _ gateway: String) throws {
        let route = try routeGet(ns, address)
        #expect(route.dev == dev && route.gateway == gateway, "ip route get \(address): \(route)")
    }

    /// Waits until `read()`'s report agrees with the kernel (``disagreement(_:_:)``); fails with
    /// the last disagreement.
    static func awaitAgreement(_ what: String, _ ns: NetworkNamespace, _ read: () throws -> StatusReport)
        async throws
    {
        var last: String?
        do {
            try await waitUntil(what, timeout: .seconds(30)) {
                last = try disagreement(try read(), ns)
                return last == nil
            }
        } catch let error as TestFailure {
            throw TestFailure("\(error): \(last ?? "")")
        }
    }

    @Test("with 200,000 routes in several tables, status and the agent agree with ip on defaults and targets")
    func largeTableAgreesWithTheKernel() async throws {
        try await NetworkNamespace.with(["large", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try PolicyRoutingTests.uplink("up0", 1, metric: 100, in: ns, peer: peer)
            try PolicyRoutingTests.uplink("up1", 2, metric: 200, in: ns, peer: peer)
            try ns.ip("rule", "add", "to", Self.ruledTarget, "lookup", "100")
            try ns.ip("rule", "add", "from", "10.9.9.9", "lookup", "200")
            try ns.ip("-6", "rule", "add", "from", "fd09::9", "lookup", "100")
            try ns.ip("-6", "rule", "add", "from", "fd09::a", "lookup", "200")
            let agent = try await AgentHarness(namespace: ns, config: Self.config)
            defer { agent.stop() }
            try await agent.awaitReady()

            try ns.batch(Self.batch())
            // Sanity: the set-up routes the targets away from up0, the main table's favourite.
            try Self.expectRoute(ns, Self.specificTarget, "up1", "10.2.0.9")
            try Self.expectRoute(ns, Self.ruledTarget, "up1", "10.2.0.1")
            try await Self.awaitAgreement("the agent agrees with ip after the batch", ns) {
                try PolicyRoutingTests.status(ns, socket: agent.socketPath)
            }
            // Computed afresh from a dump of the 200,000-route table.
            let output = try Command.check(
                ["ip", "netns", "exec", ns.name, BuiltProducts.path("netpathctl"), "status", "--json", "--local"]
                    + ["--config", agent.configFile.path]
            )
            let local = try Self.disagreement(try JSONDecoder().decode(StatusReport.self, from: Data(output.utf8)), ns)
            #expect(local == nil, "status --local: \(local ?? "")")

            // The rule goes: the ruled target follows the main table's lower metric, up0.
            try ns.ip("rule", "del", "to", Self.ruledTarget, "lookup", "100")
            try Self.expectRoute(ns, Self.ruledTarget, "up0", "10.1.0.1")
            try await Self.awaitAgreement("the agent follows the rule's removal", ns) {
                try PolicyRoutingTests.status(ns, socket: agent.socketPath)
            }
            // The specific route goes (a route the agent never kept): the specific target
            // follows up0 too.
            try ns.ip("route", "del", "198.51.100.0/24")
            try Self.expectRoute(ns, Self.specificTarget, "up0", "10.1.0.1")
            try await Self.awaitAgreement("the agent follows the specific route's removal", ns) {
                try PolicyRoutingTests.status(ns, socket: agent.socketPath)
            }
        }
    }
}
