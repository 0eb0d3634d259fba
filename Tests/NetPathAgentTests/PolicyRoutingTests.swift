// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import NetPathControl
import TestSupport
import Testing

/// Policy routing as real boxes set it up: default routes in other tables behind `ip rule`.
/// Whatever the set-up, the primary per family is the interface `ip route get` names.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct PolicyRoutingTests {
    /// The interface `ip route get` names for the probe address of `family`, in `namespace`.
    static func kernelInterface(_ namespace: NetworkNamespace, _ family: IPAddress.Family) throws -> String? {
        let result = try Command.run(
            ["ip", "-n", namespace.name, "-j", family == .ipv4 ? "-4" : "-6", "route", "get"]
                + [KernelRoute.probe(family).description]
        )
        guard result.status == 0,
            let routes = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        else { return nil }
        return routes.first?["dev"] as? String
    }

    /// `netpathctl status --json`, from the agent or (`socket` nil) computed locally in `namespace`.
    static func status(_ namespace: NetworkNamespace, socket: String? = nil) throws -> StatusReport {
        let source = socket.map { ["--socket", $0] } ?? ["--local"]
        let output = try Command.check(
            ["ip", "netns", "exec", namespace.name, BuiltProducts.path("netpathctl"), "status", "--json"] + source
        )
        return try JSONDecoder().decode(StatusReport.self, from: Data(output.utf8))
    }

    /// An Ethernet-like uplink `name` with IPv4 and IPv6 addresses and main-table default routes.
    static func uplink(_ name: String, _ number: Int, metric: Int, in ns: NetworkNamespace, peer: NetworkNamespace)
        throws
    {
        try ns.addVeth(name, peer: name + "p", in: peer)
        try peer.ip("link", "set", name + "p", "up")
        try ns.ip("link", "set", name, "up")
        try ns.ip("addr", "add", "10.\(number).0.10/24", "dev", name)
        try ns.ip("addr", "add", "fd0\(number)::10/64", "dev", name, "nodad")
        try ns.ip("route", "add", "default", "via", "10.\(number).0.1", "dev", name, "metric", "\(metric)")
        try ns.ip("-6", "route", "add", "default", "via", "fd0\(number)::1", "dev", name, "metric", "\(metric)")
    }

    /// The priority of the first rule of `family` whose `ip rule` text contains `text`.
    static func rulePriority(_ ns: NetworkNamespace, _ family: IPAddress.Family, containing text: String) throws
        -> UInt32?
    {
        let listing = try ns.ip(family == .ipv4 ? "-4" : "-6", "rule", "show")
        for line in listing.split(separator: "\n") where line.contains(text) {
            return UInt32(line.prefix { $0 != ":" })
        }
        return nil
    }

    @Test("wg-quick: a tunnel's table behind an fwmark rule carries the path, as ip route get says")
    func wgQuick() async throws {
        try await NetworkNamespace.with(["wgq", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try Self.uplink("up0", 1, metric: 100, in: ns, peer: peer)
            let tunnel = try await TunDevice("wg0", in: ns)
            defer { tunnel.close() }
            try ns.ip("addr", "add", "10.66.0.2/32", "dev", "wg0")
            try ns.ip("-6", "addr", "add", "fd66::2/128", "dev", "wg0", "nodad")
            let agent = try await AgentHarness(namespace: ns, config: "")
            defer { agent.stop() }
            try await agent.awaitReady()

            // What wg-quick up does (wg-quick(8), "add_default"), for both families.
            for family in ["-4", "-6"] {
                try ns.ip(family, "route", "add", "default", "dev", "wg0", "table", "51820")
                try ns.ip(family, "rule", "add", "not", "fwmark", "51820", "table", "51820")
                try ns.ip(family, "rule", "add", "table", "main", "suppress_prefixlength", "0")
            }
            try await agent.awaitHookRun("the path moving to wg0") { $0.hasPrefix("- changed wg0 0") }

            for report in [try Self.status(ns, socket: agent.socketPath), try Self.status(ns)] {
                let path = try #require(report.paths.first)
                for family in [IPAddress.Family.ipv4, .ipv6] {
                    let kernel = try Self.kernelInterface(ns, family)
                    #expect(kernel == "wg0")
                    #expect((family == .ipv4 ? path.primaryIPv4 : path.primaryIPv6)?.name == kernel)
                    let route = try #require(report.kernelRoutes.first { $0.family == family })
                    #expect(route.table == 51820)
                    #expect(route.rule?.priority == (try Self.rulePriority(ns, family, containing: "lookup 51820")))
                    #expect(route.rule?.selector == "not from all fwmark 0xca6c lookup 51820")
                }
                #expect(path.availableInterfaces.map(\.name) == ["wg0", "up0"])
                #expect(report.interfaces.first { $0.name == "wg0" }?.defaultRoutes.map(\.table) == [51820, 51820])
            }

            // wg-quick down: the rules go, table 51820 is unreachable, and up0 carries the path.
            for family in ["-4", "-6"] {
                try ns.ip(family, "rule", "del", "not", "fwmark", "51820", "table", "51820")
                try ns.ip(family, "rule", "del", "table", "main", "suppress_prefixlength", "0")
            }
            try await agent.awaitHookRun("the path moving back to up0") { $0.hasPrefix("- changed up0 0") }
            let report = try Self.status(ns, socket: agent.socketPath)
            #expect(try Self.kernelInterface(ns, .ipv4) == "up0")
            #expect(report.paths.first?.primaryIPv4?.name == "up0")
            #expect(report.paths.first?.primaryIPv6?.name == "up0")
            #expect(report.paths.first?.availableInterfaces.map(\.name) == ["up0"])
            #expect(report.interfaces.first { $0.name == "wg0" }?.defaultRoutes == [])
        }
    }

    @Test("per-uplink tables: a catch-all rule to one uplink's table beats a lower main-table metric")
    func perUplinkTables() async throws {
        try await NetworkNamespace.with(["tables", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try Self.uplink("up0", 1, metric: 100, in: ns, peer: peer)
            // up1 keeps its default routes in its own table only (NetworkManager's
            // ipv4.route-table, networkd's RouteTable=), with source rules for each uplink and a
            // catch-all rule that sends everything else through up1.
            try ns.addVeth("up1", peer: "up1p", in: peer)
            try peer.ip("link", "set", "up1p", "up")
            try ns.ip("link", "set", "up1", "up")
            try ns.ip("addr", "add", "10.2.0.10/24", "dev", "up1")
            try ns.ip("addr", "add", "fd02::10/64", "dev", "up1", "nodad")
            try ns.ip("route", "add", "default", "via", "10.2.0.1", "dev", "up1", "table", "200")
            try ns.ip("-6", "route", "add", "default", "via", "fd02::1", "dev", "up1", "table", "200")
            try ns.ip("route", "add", "default", "via", "10.1.0.1", "dev", "up0", "table", "100")
            try ns.ip("rule", "add", "pref", "100", "from", "10.1.0.10", "table", "100")
            try ns.ip("rule", "add", "pref", "101", "from", "10.2.0.10", "table", "200")
            for family in ["-4", "-6"] { try ns.ip(family, "rule", "add", "pref", "200", "table", "200") }

            let report = try Self.status(ns)
            let path = try #require(report.paths.first)
            for family in [IPAddress.Family.ipv4, .ipv6] {
                #expect(try Self.kernelInterface(ns, family) == "up1")
                #expect((family == .ipv4 ? path.primaryIPv4 : path.primaryIPv6)?.name == "up1")
                let route = try #require(report.kernelRoutes.first { $0.family == family })
                #expect(route.table == 200)
                #expect(route.rule == RoutingRule(priority: 200, selector: "from all lookup 200"))
            }
            #expect(path.availableInterfaces.map(\.name) == ["up1", "up0"])
            // up0's default routes of every reachable table count, none of an unreachable one.
            let up0 = try #require(report.interfaces.first { $0.name == "up0" })
            #expect(Set(up0.defaultRoutes.map(\.table)) == [100, 254])

            // The explanation says why up0 lost, and names the table and the rule.
            let explain = try Command.check([
                "ip", "netns", "exec", ns.name, BuiltProducts.path("netpathctl"), "explain", "--local",
            ])
            #expect(explain.contains("the kernel routes traffic to the internet through up1"), "\(explain)")
            #expect(explain.contains("table 200 (kernel's route, rule 200: from all lookup 200)"), "\(explain)")
        }
    }
}
