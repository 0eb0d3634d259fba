// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathCore
import TestSupport
import Testing

/// The agent's loop never waits for anything slow: a startup hook that does not end, a name
/// server that does not answer. Kernel events, reloads and the stop flow meanwhile.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentLoopTests {
    /// Two uplinks, `slow0` and `fast0`, whose peers (in `peer`) the test can unplug.
    static func uplinks(_ host: NetworkNamespace, _ peer: NetworkNamespace) throws {
        for (name, subnet, metric) in [("slow0", "192.0.2", "100"), ("fast0", "198.51.100", "200")] {
            try host.addVeth(name, peer: name + "p", in: peer)
            try host.ip("link", "set", name, "up")
            try peer.ip("link", "set", name + "p", "up")
            try host.ip("addr", "add", "\(subnet).10/24", "dev", name)
            try host.ip("route", "add", "default", "via", "\(subnet).1", "dev", name, "metric", metric)
        }
    }

    @Test(
        "a startup hook that does not end: another interface's event reaches its hook at once; SIGHUP and SIGTERM are handled"
    )
    func slowStartupHook() async throws {
        try await NetworkNamespace.with(["loop", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            try await Self.slowStartupHookScenario(host: namespaces[0], peer: namespaces[1])
        }
    }

    // Outside the closure, like AgentLifecycleTests.reloadScenario: the 6.3 compiler's
    // region-isolation pass has crashed on long bodies inside `NetworkNamespace.with`.
    static func slowStartupHookScenario(host: NetworkNamespace, peer: NetworkNamespace) async throws {
        let scratch = try ScratchDirectory.make("np-loop")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let gate = try HookGate(in: scratch)
        defer { gate.release() }
        let blocked = scratch.appendingPathComponent("blocked.log")
        // Only slow0's startup events wait (as long as a 40 s sleep would, or longer: until the
        // test releases them); every other event passes, and 10-record logs them all.
        let slowHook = """
            #!/bin/sh
            [ "$NETPATH_STARTUP" = 1 ] && [ "$NETPATH_SCOPE" = interface ] && [ "$1" = slow0 ] || exit 0
            echo "$2 $1" >> \(blocked.path)
            \(gate.waitCommand)
            """
        let agent = try await AgentHarness(
            namespace: host,
            config: "[agent]\nhook_timeout = \"5m\"\n",
            extraHooks: ["05-slow": slowHook]
        )
        defer {
            gate.release()
            agent.stop()
        }
        _ = try await agent.awaitLines(in: blocked, "slow0's startup hook to start waiting", count: 1) { _ in true }
        try await agent.awaitHookRun("fast0's startup event") { $0 == "- up fast0 1" }

        // A link change meanwhile: fast0's hook runs within the usual time.
        let unplugged = ContinuousClock.now
        try peer.ip("link", "set", "fast0p", "down")
        try await agent.awaitHookRun("fast0's carrier-down", timeout: .seconds(10)) { $0 == "- carrier-down fast0 0" }
        let latency = ContinuousClock.now - unplugged
        #expect(latency < .seconds(2), "fast0's hook ran \(latency) after the change")

        // READY=1 may wait for the startup hooks (bounded); the loop does not.
        #expect(!(await agent.notify.messages.all.contains("READY=1")), "READY=1 before the startup hooks ended")

        agent.process.send(SIGHUP)
        _ = try await agent.notify.messages.next("RELOADING=1 during the startup hook", timeout: .seconds(5)) {
            $0 == "RELOADING=1"
        }
        _ = try await agent.stderr.next("the reload, done during the startup hook", timeout: .seconds(5)) {
            $0.contains("configuration reloaded")
        }

        agent.process.send(SIGTERM)
        _ = try await agent.notify.messages.next("STOPPING=1", timeout: .seconds(5)) { $0 == "STOPPING=1" }
        // The loop itself is stopping (not stuck behind the hook): it says what it waits for.
        _ = try await agent.stderr.next("the loop's stop, during the startup hook", timeout: .seconds(5)) {
            $0.contains("stopping: waiting up to")
        }
        #expect(agent.process.isRunning, "the stop waits for the hook it started")
        gate.release()
        _ = try await agent.stderr.next("the agent's exit once the hook ended", timeout: .seconds(20)) {
            $0.contains("stopped")
        }
        #expect(agent.process.wait() == 0)
        #expect(agent.hookRuns().contains("- up slow0 1"), "slow0's startup event reached 10-record after the gate")
    }

    @Test(
        "resolv.conf written after the last address and route: the path's supports_dns follows at once, and its hook runs"
    )
    func resolvConfWrittenLast() async throws {
        try await NetworkNamespace.with(["dnslast", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            // `ip netns exec` bind-mounts this file over /etc/resolv.conf for the agent.
            let etc = try ResolvConfOverride(namespace: namespaces[0], "# no servers yet\n")
            defer { etc.remove() }
            let config = """
                [[rule]]
                name = "path"
                policy = "default"
                on = ["changed"]
                run = ["10-record"]
                """
            let agent = try await AgentHarness(namespace: namespaces[0], config: config)
            defer { agent.stop() }
            try await agent.awaitReady()
            let before = try ControlClient(path: agent.socketPath).request(.status).status?.paths.first {
                $0.policy == "default"
            }
            #expect(before?.status == .satisfied && before?.supportsDNS == false)

            // As a DHCP client does last, and in place: a rename would leave the mount on the old file.
            let file = etc.directory.appendingPathComponent("resolv.conf").path
            try "nameserver 192.0.2.1\n".write(toFile: file, atomically: false, encoding: .utf8)
            try await agent.awaitHookRun("the path's change for its DNS server", timeout: .seconds(5)) {
                $0 == "path changed up0 0"
            }
            let after = try ControlClient(path: agent.socketPath).request(.status).status?.paths.first {
                $0.policy == "default"
            }
            #expect(after?.supportsDNS == true)
        }
    }

    @Test(
        "a target whose name server never answers: link events keep their latency; explain says the target is unresolved"
    )
    func unansweredNameServer() async throws {
        try await NetworkNamespace.with(["dns", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            try await Self.unansweredNameServerScenario(host: namespaces[0], peer: namespaces[1])
        }
    }

    static func unansweredNameServerScenario(host: NetworkNamespace, peer: NetworkNamespace) async throws {
        // The name server sits behind the default gateway, whose neighbour entry points at a MAC
        // nobody has: queries leave up0 for the peer namespace, which drops them. No answer, no
        // ICMP error, nothing outside the test's namespaces. Each lookup waits 2 x 10 s.
        try host.ip("neigh", "replace", "192.0.2.1", "lladdr", "02:00:00:00:00:01", "dev", "up0", "nud", "permanent")
        let etc = try ResolvConfOverride(namespace: host, "nameserver 203.0.113.53\noptions timeout:10 attempts:2\n")
        defer { etc.remove() }

        let config = """
            [[policy]]
            name = "vpn"
            target = "gateway.netpath-test.example"

            [[rule]]
            name = "links"
            on = ["carrier-down", "carrier-up"]
            interface = "up0"
            run = ["10-record"]
            """
        let started = ContinuousClock.now
        let agent = try await AgentHarness(namespace: host, config: config)
        defer { agent.stop() }
        try await agent.awaitReady()
        #expect(ContinuousClock.now - started < .seconds(8), "READY=1 waited for DNS")

        let explained = try ControlClient(path: agent.socketPath).request(.explain)
        let vpn = explained.explain?.report.policies.first { $0.policy.name == "vpn" }
        #expect(vpn?.path.unsatisfiedReason == .targetUnresolved, "\(String(describing: vpn?.path))")
        let up0 = vpn?.interfaces.first { $0.name == "up0" }
        #expect(up0?.reason == "target-unresolved")
        #expect(
            up0?.detail.contains("is unresolved: its name is still being looked up") == true,
            "\(up0?.detail ?? "-")"
        )

        for (event, state) in [("carrier-down", "down"), ("carrier-up", "up")] {
            let changed = ContinuousClock.now
            try peer.ip("link", "set", "up0p", state)
            try await agent.awaitHookRun(event, timeout: .seconds(25)) { $0 == "links \(event) up0 0" }
            let latency = ContinuousClock.now - changed
            #expect(latency < .seconds(2), "\(event) reached its hook \(latency) after the change")
        }
    }
}
