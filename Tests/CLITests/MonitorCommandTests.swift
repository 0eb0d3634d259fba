// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// `netpathctl monitor --local --json` as a user runs it: a process in a namespace, reading the
/// kernel, printing one event per line.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct MonitorCommandTests {
    @Test("a veth toggle prints carrier-down, down, unsatisfied, then carrier-up, up, satisfied")
    func vethToggleEvents() async throws {
        try await NetworkNamespace.with(["mon", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("uplink0", peer: "uplink0p", in: peer)
            try ns.ip("link", "set", "uplink0", "up")
            try peer.ip("link", "set", "uplink0p", "up")
            try ns.ip("addr", "add", "192.0.2.10/24", "dev", "uplink0")
            try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "uplink0")

            let monitor = try RunningProcess(
                ["ip", "netns", "exec", ns.name, BuiltProducts.path("netpathctl"), "monitor", "--local", "--json"]
            )
            defer { monitor.terminate() }
            let events = Recorder<Event>()
            await events.record(
                monitor.stdoutLines.compactMap { line in try? JSONDecoder().decode(Event.self, from: Data(line.utf8)) }
            )
            // The monitor says on stderr when it has its initial state; changes after that are events.
            let ready = Recorder<String>()
            await ready.record(monitor.stderrLines)
            _ = try await ready.next("the monitor's ready line on stderr") { $0.hasPrefix("monitoring ") }

            try peer.ip("link", "set", "uplink0p", "down")
            let down = try await Self.collect(
                events,
                until: { $0.scope == .path && $0.name == .unsatisfied },
                "path unsatisfied"
            )
            #expect(down == ["carrier-down uplink0", "down uplink0", "unsatisfied default"])

            try peer.ip("link", "set", "uplink0p", "up")
            let up = try await Self.collect(
                events,
                until: { $0.scope == .path && $0.name == .satisfied },
                "path satisfied"
            )
            #expect(up == ["carrier-up uplink0", "up uplink0", "satisfied default"])

            let satisfied = try #require(await events.all.last)
            #expect(satisfied.path?.primary?.name == "uplink0")
            #expect(satisfied.path?.gateways == ["192.0.2.1"])
            #expect(satisfied.interface == "uplink0")
        }
    }

    /// The uplink's interface events and the path events, as "name subject", up to the one that
    /// satisfies `last`.
    static func collect(_ events: Recorder<Event>, until last: @escaping (Event) -> Bool, _ what: String) async throws
        -> [String]
    {
        var seen: [String] = []
        while true {
            let event = try await events.next(what) { $0.interface == "uplink0" || $0.scope == .path }
            seen.append("\(event.name) \(event.scope == .path ? event.policy ?? "" : event.interface ?? "")")
            if last(event) { return seen }
        }
    }

    @Test("status --local --json prints interfaces and paths in the shape of docs/events.md")
    func statusJSON() async throws {
        try await NetworkNamespace.with("status") { ns in
            try ns.addVeth("eth9", peer: "eth9p")
            try ns.ip("link", "set", "eth9", "up")
            try ns.ip("link", "set", "eth9p", "up")
            try ns.ip("addr", "add", "198.51.100.7/24", "dev", "eth9")
            try ns.ip("route", "add", "default", "via", "198.51.100.1", "dev", "eth9", "metric", "50")
            let output = try Command.check([
                "ip", "netns", "exec", ns.name, BuiltProducts.path("netpathctl"), "status", "--local", "--json",
            ])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let interfaces = try #require(object["interfaces"] as? [[String: Any]])
            let eth9 = try #require(interfaces.first { $0["name"] as? String == "eth9" })
            for key in [
                "name", "index", "type", "kind", "driver", "admin_up", "carrier", "oper_state", "mtu", "mac", "metered",
                "metered_reason", "addresses", "default_routes", "classified_by",
            ] {
                #expect(eth9[key] != nil, "interface key \(key) missing")
            }
            #expect(eth9["kind"] as? String == "veth")
            let routes = try #require(eth9["default_routes"] as? [[String: Any]])
            #expect(routes.first?["metric"] as? Int == 50)
            let paths = try #require(object["paths"] as? [[String: Any]])
            let path = try #require(paths.first)
            for key in [
                "policy", "status", "unsatisfied_reason", "primary", "primary_ipv4", "primary_ipv6",
                "available_interfaces", "is_expensive", "is_constrained", "supports_ipv4", "supports_ipv6",
                "supports_dns", "gateways",
            ] {
                #expect(path.keys.contains(key), "path key \(key) missing")
            }
            #expect(path["status"] as? String == "satisfied")
            #expect(path["primary"] as? String == "eth9")
        }
    }

    @Test("without --local and without an agent, status fails with a hint to use --local")
    func statusWithoutAgent() throws {
        let result = try Command.run([
            BuiltProducts.path("netpathctl"), "status", "--socket", "/nonexistent/netpathd.sock",
        ])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--local"))
    }
}
