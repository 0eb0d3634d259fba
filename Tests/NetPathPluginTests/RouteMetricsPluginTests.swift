// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathConfig
import NetPathCore
import NetPathLinux
import NetPathPlugin
import RouteMetricsPlugin
import TestSupport
import Testing

/// `route-metrics` against the kernel: two uplinks, the wired one with the worse metric.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct RouteMetricsPluginTests {
    static let overrides = [
        InterfaceOverride(match: try! Glob("wired*"), type: .wired),
        InterfaceOverride(match: try! Glob("wlan*"), type: .wifi),
    ]
    static let policy = PathPolicy(name: "default", require: [.wired, .wifi], prefer: [.wired, .wifi])

    /// wired0 (198.51.100.0/24, 2001:db8:1::/64, metric 600) and wlan0 (203.0.113.0/24,
    /// 2001:db8:2::/64, metric 100), peers in `peer`.
    /// Adds and removes a marker route (not a default route, so the replay ignores it) and waits
    /// until `ip monitor` has printed it. With `retrying`, the monitor may not be subscribed yet:
    /// the marker is added again until one shows.
    static func marker(_ ns: NetworkNamespace, _ notifications: Recorder<String>, retrying: Bool) async throws {
        for attempt in 1...(retrying ? 50 : 1) {
            try ns.ip("route", "add", "192.0.2.99/32", "dev", "wired0")
            try ns.ip("route", "del", "192.0.2.99/32", "dev", "wired0")
            do {
                _ = try await notifications.next(
                    "the marker route in ip monitor (attempt \(attempt))",
                    timeout: retrying ? .milliseconds(200) : .seconds(10)
                ) { $0.hasPrefix("Deleted 192.0.2.99") }
                return
            } catch  where retrying && attempt < 50 {
                continue
            }
        }
    }

    static func uplinks(_ ns: NetworkNamespace, _ peer: NetworkNamespace) throws {
        try ns.addVeth("wired0", peer: "wired0p", in: peer)
        try ns.addVeth("wlan0", peer: "wlan0p", in: peer)
        for link in ["wired0p", "wlan0p"] { try peer.ip("link", "set", link, "up") }
        try ns.batch([
            "link set wired0 up", "link set wlan0 up",
            "addr add 198.51.100.10/24 dev wired0", "addr add 203.0.113.10/24 dev wlan0",
            "addr add 2001:db8:1::10/64 dev wired0 nodad", "addr add 2001:db8:2::10/64 dev wlan0 nodad",
            "route add default via 198.51.100.1 dev wired0 metric 600",
            "route add default via 203.0.113.1 dev wlan0 metric 100",
        ])
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "wired0", "metric", "600")
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8:2::1", "dev", "wlan0", "metric", "100")
    }

    /// route-metrics on the default policy in `ns`, fed by a pipeline that watches `ns`.
    static func enforcing(in ns: NetworkNamespace) async throws -> (PluginRunner, Pipeline) {
        let settings = PluginConfiguration(
            name: "route-metrics",
            table: try ConfigurationLoaderShim.table("policy = \"default\"", name: "route-metrics"),
            file: "netpath.toml"
        )
        let plugin = LoadedPlugin(try RouteMetricsPlugin(configuration: settings), configuration: settings)
        let runner = PluginRunner(
            plugins: [plugin],
            routeEditor: try NetlinkRouteEditor(namespace: ns.name),
            options: .init(timeout: .seconds(5)),
            logger: Logger(label: "test.route-metrics")
        )
        let pipeline = try await Pipeline(
            namespace: ns,
            overrides: overrides,
            policies: [policy],
            runner: runner,
            plugins: ["route-metrics"],
            deliverStartup: false
        )
        return (runner, pipeline)
    }

    @Test("enforces the preferred wired uplink, follows carrier loss, never leaves no default route, restores on stop")
    func enforcesAndRestores() async throws {
        try await NetworkNamespace.with(["rm", "rmpeer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try Self.uplinks(ns, peer)
            let v4 = "192.0.2.1", v6 = "2001:db8:ffff::1"
            #expect(try Routes.device(for: v4, in: ns) == "wlan0")
            #expect(try Routes.device(for: v6, in: ns) == "wlan0")

            let (runner, pipeline) = try await Self.enforcing(in: ns)
            defer { pipeline.stop() }
            // Two witnesses that a default route exists at every instant: `ip route show` polled in
            // a tight loop, and every route notification replayed (which sees each add and delete).
            let monitor = try RunningProcess(["ip", "-n", ns.name, "monitor", "route"])
            defer { monitor.terminate() }
            let notifications = Recorder<String>()
            await notifications.record(monitor.stdoutLines)
            try await Self.marker(ns, notifications, retrying: true)
            let poller = DefaultRoutePoller(namespace: ns)
            var pollerStopped = false
            defer { if !pollerStopped { _ = poller.stop() } }

            // Enabling it: the kernel now picks the wired link, in both families.
            await runner.startAll()
            #expect(try Routes.device(for: v4, in: ns) == "wired0")
            #expect(try Routes.device(for: v6, in: ns) == "wired0")
            #expect(try Routes.defaults("-4", in: ns) == ["wired0": 100, "wlan0": 600])
            #expect(try Routes.defaults("-6", in: ns) == ["wired0": 100, "wlan0": 600])

            // Wired loses carrier: the path's primary becomes Wi-Fi, and so does the kernel's choice.
            try peer.ip("link", "set", "wired0p", "down")
            try await Routes.waitForDevice("wlan0", for: v4, in: ns)
            try await Routes.waitForDevice("wlan0", for: v6, in: ns)
            await runner.waitUntilIdle()

            // Carrier back: wired again.
            try peer.ip("link", "set", "wired0p", "up")
            try await Routes.waitForDevice("wired0", for: v4, in: ns)
            try await Routes.waitForDevice("wired0", for: v6, in: ns)
            await runner.waitUntilIdle()

            // Stopping puts the original metrics back.
            await runner.stopAll()
            #expect(try Routes.defaults("-4", in: ns) == ["wired0": 600, "wlan0": 100])
            #expect(try Routes.defaults("-6", in: ns) == ["wired0": 600, "wlan0": 100])

            let polled = poller.stop()
            pollerStopped = true
            #expect(polled.readings >= 3, "the poller ran \(polled.readings) times")
            #expect(
                polled.emptyIPv4 == 0,
                "\(polled.emptyIPv4) of \(polled.readings) readings had no IPv4 default route"
            )
            #expect(
                polled.emptyIPv6 == 0,
                "\(polled.emptyIPv6) of \(polled.readings) readings had no IPv6 default route"
            )
            // Notifications reach the monitor in order: once a marker after the last change has
            // arrived, so has every default-route change before it.
            try await Self.marker(ns, notifications, retrying: false)
            let replay = DefaultRouteReplay(initial: ["-4": 2, "-6": 2], lines: await notifications.all)
            #expect(replay.changes >= 12, "saw \(replay.changes) default-route notifications")
            // Add before delete: the two uplinks' routes never drop below two per family.
            #expect(replay.fewest == ["-4": 2, "-6": 2], "fewest default routes at any instant: \(replay.fewest)")
            let statistics = runner.statistics["route-metrics"]
            #expect(statistics?.count(.failure) == 0, "last error: \(statistics?.lastError ?? "")")
            #expect(statistics?.lifecycleFailures.isEmpty == true, "last error: \(statistics?.lastError ?? "")")
        }
    }

    @Test("IPv4 default routes that shared a metric, as a DHCP client leaves them, share it again after stop")
    func restoresSharedMetric() async throws {
        try await NetworkNamespace.with(["rms", "rmspeer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("wired0", peer: "wired0p", in: peer)
            try ns.addVeth("wlan0", peer: "wlan0p", in: peer)
            for link in ["wired0p", "wlan0p"] { try peer.ip("link", "set", link, "up") }
            // systemd-networkd's DHCP routes: both at its one metric, 1024.
            try ns.batch([
                "link set wired0 up", "link set wlan0 up",
                "addr add 198.51.100.10/24 dev wired0", "addr add 203.0.113.10/24 dev wlan0",
                "route add default via 203.0.113.1 dev wlan0 metric 1024",
                "route append default via 198.51.100.1 dev wired0 metric 1024",
            ])
            let (runner, pipeline) = try await Self.enforcing(in: ns)
            defer { pipeline.stop() }

            await runner.startAll()
            #expect(try Routes.defaults("-4", in: ns) == ["wired0": 100, "wlan0": 600])
            await runner.stopAll()
            #expect(try Routes.defaults("-4", in: ns) == ["wired0": 1024, "wlan0": 1024])
            let statistics = runner.statistics["route-metrics"]
            #expect(statistics?.count(.failure) == 0, "last error: \(statistics?.lastError ?? "")")
        }
    }

    @Test("metrics come from the configuration; bad values name their line")
    func configuration() throws {
        let table = try ConfigurationLoaderShim.table(
            "policy = \"uplink\"\nmetrics = { wired = 10, wifi = 20, cellular = 30, other = 40 }",
            name: "route-metrics"
        )
        let plugin = try RouteMetricsPlugin(
            configuration: PluginConfiguration(name: "route-metrics", table: table, file: "netpath.toml")
        )
        #expect(plugin.policy == "uplink")

        let bad = try ConfigurationLoaderShim.table("metrics = { wired = -1, wify = 600 }", name: "route-metrics")
        #expect {
            try RouteMetricsPlugin(
                configuration: PluginConfiguration(name: "route-metrics", table: bad, file: "netpath.toml")
            )
        } throws: { error in
            let text = "\(error)"
            return text.contains("netpath.toml:2:")
                && text.contains("plugin.route-metrics.metrics.wired must be between")
                && text.contains("unknown key \"wify\"") && text.contains("did you mean \"wifi\"?")
        }
    }
}

/// Replays `ip monitor route` lines and tracks how many default routes each family had at the
/// fewest: a delete before its replacement was added would show as zero.
struct DefaultRouteReplay {
    var changes = 0
    var fewest: [String: Int]

    init(initial: [String: Int], lines: [String]) {
        var count = initial
        fewest = initial
        for line in lines {
            let deleted = line.hasPrefix("Deleted ")
            let route = deleted ? String(line.dropFirst("Deleted ".count)) : line
            guard route.hasPrefix("default ") else { continue }
            let family = route.contains(":") ? "-6" : "-4"
            changes += 1
            count[family, default: 0] += deleted ? -1 : 1
            fewest[family] = min(fewest[family] ?? .max, count[family]!)
        }
    }
}
