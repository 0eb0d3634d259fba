// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// netpathd as systemd sees it: notify messages, SIGHUP reloads, graceful stop.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentLifecycleTests {
    static let rules = """
        [[rule]]
        name = "on-down"
        on = ["down"]
        run = ["10-record"]
        """

    /// A namespace with one uplink whose peer (in a second namespace) the test can unplug.
    static func uplink(_ namespaces: [NetworkNamespace], defaultRoute: Bool = true) throws {
        let (ns, peer) = (namespaces[0], namespaces[1])
        try ns.addVeth("up0", peer: "up0p", in: peer)
        try ns.ip("link", "set", "up0", "up")
        try peer.ip("link", "set", "up0p", "up")
        try ns.ip("addr", "add", "192.0.2.10/24", "dev", "up0")
        if defaultRoute { try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0") }
    }

    @Test("READY=1 comes after the startup events ran; SIGHUP gives RELOADING=1 then READY=1; SIGTERM gives STOPPING=1")
    func notifySequence() async throws {
        try await NetworkNamespace.with(["life", "peer"]) { namespaces in
            try Self.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            // Dispatcher mode, startup_events on: the hook ran for every startup event before READY.
            let runs = agent.hookRuns()
            #expect(runs.contains("- up up0 1"), "\(runs)")
            #expect(runs.contains("- satisfied up0 1"), "\(runs)")
            let status = try await agent.notify.messages.next("STATUS= after READY") { $0.hasPrefix("STATUS=") }
            #expect(status == "STATUS=default: satisfied via up0 (other)")

            agent.process.send(SIGHUP)
            _ = try await agent.notify.messages.next("RELOADING=1") { $0 == "RELOADING=1" }
            let monotonic = try await agent.notify.messages.next("MONOTONIC_USEC") { $0.hasPrefix("MONOTONIC_USEC=") }
            #expect(UInt64(monotonic.dropFirst("MONOTONIC_USEC=".count)) != nil)
            _ = try await agent.notify.messages.next("READY=1 after the reload") { $0 == "READY=1" }

            agent.process.send(SIGTERM)
            _ = try await agent.notify.messages.next("STOPPING=1") { $0 == "STOPPING=1" }
            #expect(agent.process.wait() == 0)
        }
    }

    @Test("with WATCHDOG_USEC set, WATCHDOG=1 arrives at about half the interval")
    func watchdogPings() async throws {
        try await NetworkNamespace.with(["dog", "peer"]) { namespaces in
            try Self.uplink(namespaces)
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: "",
                environment: ["WATCHDOG_USEC": "400000"]
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            var stamps: [ContinuousClock.Instant] = []
            for _ in 0..<4 {
                let ping = try await agent.notify.arrivals.next("WATCHDOG=1", timeout: .seconds(2)) {
                    $0.text == "WATCHDOG=1"
                }
                stamps.append(ping.time)
            }
            let gaps = zip(stamps.dropFirst(), stamps).map { $0 - $1 }
            // Half of 400 ms; generous bounds, since this is a loaded 2-core machine.
            for gap in gaps { #expect(gap > .milliseconds(100) && gap < .milliseconds(1000), "gap \(gap)") }
        }
    }

    @Test("SIGHUP with a broken config keeps the old rules; with a good one the new rules apply from the next event")
    func reloadKeepsOrReplacesRules() async throws {
        try await NetworkNamespace.with(["reload", "peer"]) { namespaces in
            try Self.uplink(namespaces)
            try await Self.reloadScenario(host: namespaces[0], peer: namespaces[1])
        }
    }

    // Outside the closure: the Swift 6.3 compiler's region-isolation pass crashed on this body
    // inside `NetworkNamespace.with`'s closure.
    static func reloadScenario(host: NetworkNamespace, peer: NetworkNamespace) async throws {
        let agent = try await AgentHarness(namespace: host, config: rules)
        defer { agent.stop() }
        try await agent.awaitReady()

        try agent.rewriteConfig(rules + "\n[[rule]]\nname = \"broken\"\non = [\"upp\"]\n")
        agent.process.send(SIGHUP)
        _ = try await agent.stderr.next("the rejected reload's error, naming the line") { line in
            line.contains("netpath.toml:") && line.contains("did you mean")
        }
        _ = try await agent.stderr.next("the rejection notice") { $0.contains("reload rejected") }
        _ = try await agent.notify.messages.next("READY=1 after the rejected reload") { $0 == "READY=1" }

        try peer.ip("link", "set", "up0p", "down")
        try await agent.awaitHookRun("the old rule fires on down") { $0 == "on-down down up0 0" }

        try agent.rewriteConfig(onUpRule)
        agent.process.send(SIGHUP)
        _ = try await agent.stderr.next("the reload notice") { $0.contains("configuration reloaded") }
        try peer.ip("link", "set", "up0p", "up")
        try await agent.awaitHookRun("the new rule fires on up") { $0 == "on-up up up0 0" }
        // A down and another up: the second on-up proves the down went through the new rules.
        try peer.ip("link", "set", "up0p", "down")
        _ = try await agent.stderr.next("the down event in the agent log") {
            $0.contains("interface down") && $0.contains("up0")
        }
        try peer.ip("link", "set", "up0p", "up")
        try await agent.awaitHookRun("the second on-up", count: 2) { $0 == "on-up up up0 0" }
        // Live downs of up0 only: the startup `down` of lo matches the rule too, rightly.
        let downs = agent.hookRuns().filter { $0.hasPrefix("on-down down up0 0") }
        #expect(downs.count == 1, "runs: \(agent.hookRuns().joined(separator: " / "))")
    }

    static let onUpRule = """
        [[rule]]
        name = "on-up"
        on = ["up"]
        run = ["10-record"]
        """
}
