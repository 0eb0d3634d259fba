// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathAgent
import NetPathControl
import NetPathCore
import NetPathTesting
import ServiceLifecycle
import TestSupport
import Testing

/// Connectivity in a real agent on real veths in a namespace, with a scripted prober in place of
/// the probe helper: policies, hooks, explain and the probe command act on its verdicts.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ConnectivityAgentTests {
    /// A hook that appends "SCOPE EVENT IFACE CONNECTIVITY PREVIOUS PORTAL_URL" per run.
    static func hook(log: String) -> String {
        """
        #!/bin/sh
        echo "$NETPATH_SCOPE $NETPATH_EVENT ${1:--} ${NETPATH_CONNECTIVITY:--} ${NETPATH_PREVIOUS_CONNECTIVITY:--} ${NETPATH_PORTAL_URL:--}" >> \(log)
        """
    }

    /// `wired0` (metric 100) and `lte0` (metric 700, classified cellular), both with a default route.
    static func uplinks(_ ns: NetworkNamespace, _ peer: NetworkNamespace) throws {
        for (name, number, metric) in [("wired0", 1, 100), ("lte0", 2, 700)] {
            try ns.addVeth(name, peer: name + "p", in: peer)
            try peer.ip("link", "set", name + "p", "up")
            try ns.ip("link", "set", name, "up")
            try ns.ip("addr", "add", "10.\(number).0.10/24", "dev", name)
            try ns.ip("route", "add", "default", "via", "10.\(number).0.1", "dev", name, "metric", "\(metric)")
        }
    }

    /// An in-process agent following `namespace`, probing through `prober`.
    final class Running: Sendable {
        let directory: URL
        let hookLog: URL
        let socket: String
        let group: ServiceGroup
        let task: Task<Void, any Error>

        init(namespace: NetworkNamespace, prober: ScriptedConnectivityProber, config: String) throws {
            directory = try ScratchDirectory.make("np-conn")
            let hooks = directory.appendingPathComponent("hooks.d")
            try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
            chmod(directory.path, 0o755)
            chmod(hooks.path, 0o755)
            hookLog = directory.appendingPathComponent("hook.log")
            let hook = hooks.appendingPathComponent("10-record")
            try ConnectivityAgentTests.hook(log: hookLog.path).write(to: hook, atomically: true, encoding: .utf8)
            chmod(hook.path, 0o755)
            let file = directory.appendingPathComponent("netpath.toml")
            try "[agent]\nhooks_dir = \"\(hooks.path)\"\n\(config)".write(to: file, atomically: true, encoding: .utf8)
            socket = directory.appendingPathComponent("agent.sock").path
            let agent = try Agent(
                options: AgentOptions(
                    configPath: file.path,
                    namespace: namespace.name,
                    controlSocketPath: socket,
                    readyWaitLimit: .seconds(1),
                    logger: Logger(label: "test.connectivity"),
                    connectivityProber: { prober }
                )
            )
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: agent)], logger: Logger(label: "test.group"))
            )
            self.group = group
            task = Task { try await group.run() }
        }

        func hookRuns() -> [String] {
            ((try? String(contentsOf: hookLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// Waits for a hook run starting with `prefix` (the log is a file: polled, bounded).
        func awaitHookRun(_ prefix: String, timeout: Duration = .seconds(10)) async throws {
            try await waitUntil("a hook run \"\(prefix)…\"; runs: \(hookRuns())", timeout: timeout) {
                hookRuns().contains { $0.hasPrefix(prefix) }
            }
        }

        /// One control-socket request, on a thread of its own: the client blocks, and the agent
        /// answering it runs on the cooperative pool.
        func request(_ command: ControlCommand, interface: String? = nil) async throws -> ControlReply {
            let socket = socket
            return try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            let reply = try ControlClient(path: socket).request(command, interface: interface)
                            guard reply.ok else { throw TestFailure("\(command) failed: \(reply.error ?? "")") }
                            return reply
                        }
                    )
                }
            }
        }

        /// Waits until `status` satisfies `predicate`: the loop publishes the state just after it
        /// hands the events to the hooks, so a hook's run can come before the state is published.
        func awaitStatus(
            _ what: String,
            timeout: Duration = .seconds(10),
            where predicate: (StatusReport) -> Bool
        ) async throws -> StatusReport {
            let deadline = ContinuousClock.now + timeout
            while true {
                let status = try await request(.status).status
                if let status, predicate(status) { return status }
                guard ContinuousClock.now < deadline else {
                    throw TestFailure(
                        "timed out waiting for a status where \(what); last: \(String(describing: status))"
                    )
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            try? FileManager.default.removeItem(at: directory)
        }

        /// Runs `body`, then stops the agent and removes its directory, also when `body` throws
        /// (a failed wait): a failing test leaves neither behind.
        func stopping(after body: () async throws -> Void) async throws {
            do {
                try await body()
            } catch {
                await stop()
                throw error
            }
            await stop()
        }
    }

    /// Runs netpathctl on a thread of its own (the in-process agent answers on the pool).
    static func netpathctl(_ arguments: [String]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Command.check([BuiltProducts.path("netpathctl")] + arguments) })
            }
        }
    }

    static let config = """
        [[interface]]
        match = "wired0"
        type = "wired"

        [[interface]]
        match = "lte0"
        type = "cellular"

        [[policy]]
        name = "default"
        prefer = ["wired", "cellular"]
        require_connectivity = "full"

        [connectivity]
        interval = "1h"
        """

    @Test(
        "require_connectivity = full moves the primary from a wired link behind a portal to LTE, and back when it recovers; hooks, explain and probe show why"
    )
    func failoverAndBack() async throws {
        try await NetworkNamespace.with(["conn", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let prober = ScriptedConnectivityProber(default: .full)
            prober.set(
                "wired0",
                .portal,
                portalURL: "http://portal.test/login",
                evidence: "HTTP 302 to http://portal.test/login"
            )
            let agent = try Running(namespace: namespaces[0], prober: prober, config: Self.config)
            defer { prober.releaseAll() }
            try await agent.stopping {
                // The interface event carries old and new state and the portal; the path follows.
                try await agent.awaitHookRun(
                    "interface connectivity-changed wired0 portal unknown http://portal.test/login"
                )
                try await agent.awaitHookRun("interface connectivity-changed lte0 full unknown -")
                try await waitUntil("the path to move to lte0") {
                    agent.hookRuns().contains { $0.hasPrefix("path changed lte0 full") }
                        || agent.hookRuns().contains { $0.hasPrefix("path connectivity-changed lte0 full") }
                }
                let status = try await agent.awaitStatus("the path is on lte0 with full connectivity") {
                    $0.paths.first?.primary?.name == "lte0" && $0.paths.first?.connectivity == .full
                }
                let wired = try #require(status.interfaces.first { $0.name == "wired0" })
                #expect(wired.connectivity == .portal)
                #expect(wired.portalURL == "http://portal.test/login")

                let explain = try #require(try await agent.request(.explain).explain)
                #expect(explain.text.contains("no connectivity"), "\(explain.text)")
                #expect(explain.text.contains("HTTP 302 to http://portal.test/login"), "\(explain.text)")
                let verdict = explain.report.policies.first?.interfaces.first { $0.name == "wired0" }
                #expect(verdict?.reason == "no-connectivity")
                #expect(
                    explain.report.connectivity?.first { $0.interface == "wired0" }?.evidence
                        == "HTTP 302 to http://portal.test/login"
                )

                // The portal is passed: a probe now says so, and the primary comes back.
                prober.set("wired0", .full, evidence: "HTTP 204")
                let probes = try #require(try await agent.request(.probe, interface: "wired0").probes)
                #expect(probes.map(\.interface) == ["wired0"])
                #expect(probes.first?.verdict == .full && probes.first?.connectivity == .full)
                #expect(probes.first?.evidence == "HTTP 204")
                try await agent.awaitHookRun("interface connectivity-changed wired0 full portal -")
                try await agent.awaitHookRun("path changed wired0 full")
                _ = try await agent.awaitStatus("the path is back on wired0") {
                    $0.paths.first?.primary?.name == "wired0"
                }

                // netpathctl probe, text and JSON, through the same socket.
                let text = try await Self.netpathctl(["probe", "wired0", "--socket", agent.socket])
                #expect(text.contains("wired0") && text.contains("full") && text.contains("HTTP 204"), "\(text)")
                let json = try await Self.netpathctl(["probe", "--json", "--socket", agent.socket])
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
                let reports = try #require(object?["probes"] as? [[String: Any]], "\(json)")
                #expect(Set(reports.compactMap { $0["interface"] as? String }) == ["wired0", "lte0"])
                #expect(reports.allSatisfy { $0["verdict"] as? String == "full" && $0["evidence"] != nil })
                let table = try await Self.netpathctl(["status", "--socket", agent.socket])
                #expect(table.contains("CONNECTIVITY") && table.contains("connectivity: full"), "\(table)")
            }
        }
    }

    @Test(
        "require_connectivity = full: a probe that fails (unknown from the helper) takes the link out, explain says so; a verdict brings it back"
    )
    func failedProbeCountsAgainstTheRequirement() async throws {
        try await NetworkNamespace.with(["connfail", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let prober = ScriptedConnectivityProber(default: .full)
            prober.set("wired0", .unknown, evidence: "probe helper did not answer within 7 s")
            let agent = try Running(namespace: namespaces[0], prober: prober, config: Self.config)
            defer { prober.releaseAll() }
            try await agent.stopping {
                // The hook log first: the control socket may not be there yet.
                try await agent.awaitHookRun("interface connectivity-changed lte0 full unknown")
                let status = try await agent.awaitStatus("the path is on lte0 while wired0's probe fails") {
                    $0.paths.first?.primary?.name == "lte0" && $0.paths.first?.connectivity == .full
                }
                let wired = try #require(status.interfaces.first { $0.name == "wired0" })
                #expect(wired.connectivity == .unknown)
                #expect(wired.connectivityEvidence == "probe helper did not answer within 7 s")
                let explain = try #require(try await agent.request(.explain).explain)
                #expect(explain.text.contains("unknown (the probe failed)"), "\(explain.text)")
                let verdict = explain.report.policies.first?.interfaces.first { $0.name == "wired0" }
                #expect(verdict?.reason == "no-connectivity")

                // LTE's probe fails too: nothing is left.
                prober.set("lte0", .unknown, evidence: "probe helper exited (signal 9)")
                _ = try await agent.request(.probe, interface: "lte0")
                let none = try await agent.awaitStatus("the path is unsatisfied") {
                    $0.paths.first?.status == .unsatisfied
                }
                #expect(none.paths.first?.unsatisfiedReason == .noConnectivity)

                prober.set("wired0", .full, evidence: "HTTP 204 as expected")
                _ = try await agent.request(.probe, interface: "wired0")
                _ = try await agent.awaitStatus("the path is back on wired0") {
                    $0.paths.first?.primary?.name == "wired0" && $0.paths.first?.connectivity == .full
                }
            }
        }
    }

    @Test("a probe that hangs never delays hooks: a link change's hook runs at once meanwhile")
    func hungProbeDelaysNothing() async throws {
        try await NetworkNamespace.with(["connhang", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let prober = ScriptedConnectivityProber(default: .full)
            prober.hold("wired0")
            let requests = Recorder<ProbeRequest>()
            await requests.record(prober.requests)
            let agent = try Running(namespace: namespaces[0], prober: prober, config: Self.config)
            defer { prober.releaseAll() }
            try await agent.stopping {
                _ = try await requests.next("the probe of wired0, which hangs", timeout: .seconds(15)) {
                    $0.interface == "wired0"
                }
                try await agent.awaitHookRun("interface connectivity-changed lte0 full")

                let unplugged = ContinuousClock.now
                try namespaces[1].ip("link", "set", "lte0p", "down")
                try await agent.awaitHookRun("interface carrier-down lte0", timeout: .seconds(5))
                let latency = ContinuousClock.now - unplugged
                #expect(latency < .seconds(2), "the hook waited \(latency) beside a hung probe")
                #expect(prober.probeCount("wired0") == 1, "a second probe started beside the one in flight")
                // Its state stays unknown while the probe hangs, and not probed yet is no reason to
                // take the only link left out of the path that requires full connectivity.
                let status = try #require(try await agent.request(.status).status)
                #expect(status.interfaces.first { $0.name == "wired0" }?.connectivity == .unknown)
                #expect(status.paths.first?.primary?.name == "wired0", "\(status.paths)")
                prober.release("wired0")
                try await agent.awaitHookRun("interface connectivity-changed wired0 full unknown")
            }
        }
    }

    @Test("200 link flaps start a bounded number of probes, and the final verdict is right")
    func flapsAreCoalesced() async throws {
        try await NetworkNamespace.with(["connflap", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let prober = ScriptedConnectivityProber(default: .full)
            let agent = try Running(namespace: namespaces[0], prober: prober, config: Self.config)
            defer { prober.releaseAll() }
            try await agent.stopping {
                try await agent.awaitHookRun("interface connectivity-changed wired0 full unknown")
                let before = prober.probeCount("wired0")

                prober.set("wired0", .portal, portalURL: "http://portal.test/", evidence: "HTTP 200 with a page")
                let started = ContinuousClock.now
                // 200 flaps (down, up) of the peer's end, as fast as ip can: at most 10 s.
                let lines = (0..<200).flatMap { _ in ["link set wired0p down", "link set wired0p up"] }
                try namespaces[1].batch(lines)
                let flapping = ContinuousClock.now - started
                try await agent.awaitHookRun("interface connectivity-changed wired0 portal", timeout: .seconds(15))
                let probes = prober.probeCount("wired0") - before
                // At most one a second while flapping (spacing), plus the one after it settles.
                let seconds = Int(flapping.components.seconds) + 1
                #expect(probes <= seconds + 3, "\(probes) probes for 200 flaps in \(flapping)")
                _ = try await agent.awaitStatus("wired0 is behind a portal") {
                    $0.interfaces.first { $0.name == "wired0" }?.connectivity == .portal
                }
            }
        }
    }

    @Test("a reload with a mistake in [connectivity] is rejected at FILE:LINE:COL; probing goes on as before")
    func badReloadKeepsProbing() async throws {
        try await NetworkNamespace.with(["connreload", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let prober = ScriptedConnectivityProber(default: .full)
            let agent = try Running(namespace: namespaces[0], prober: prober, config: Self.config)
            defer { prober.releaseAll() }
            try await agent.stopping {
                try await agent.awaitHookRun("interface connectivity-changed wired0 full unknown")

                let file = agent.directory.appendingPathComponent("netpath.toml")
                var good = try String(contentsOf: file, encoding: .utf8)
                if !good.hasSuffix("\n") { good += "\n" }
                // The [connectivity] table is the file's last: the new line belongs to it.
                try (good + "method = \"ping\"\n").write(to: file, atomically: true, encoding: .utf8)
                let line = good.split(separator: "\n", omittingEmptySubsequences: false).count
                let reply: ControlReply = try await withCheckedThrowingContinuation { continuation in
                    let socket = agent.socket
                    Thread.detachNewThread {
                        continuation.resume(with: Result { try ControlClient(path: socket).request(.reload) })
                    }
                }
                #expect(reply.ok == false)
                #expect(
                    reply.error?.contains(
                        "\(file.path):\(line):10: error: method must be \"http\" or \"icmp\", found \"ping\""
                    )
                        == true,
                    "\(reply.error ?? "")"
                )
                // Still probing with the old settings: a probe now answers.
                prober.set("wired0", .limited, evidence: "HTTP 500")
                let probes = try #require(try await agent.request(.probe, interface: "wired0").probes)
                #expect(probes.first?.connectivity == .limited)
            }
        }
    }

    @Test("[connectivity] with no prober: a warning, states stay unknown, probe says why")
    func noProber() async throws {
        try await NetworkNamespace.with(["connnone", "peer"]) { namespaces in
            try Self.uplinks(namespaces[0], namespaces[1])
            let directory = try ScratchDirectory.make("np-connnone")
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("netpath.toml")
            try "[agent]\nhooks_dir = \"\(directory.path)/hooks.d\"\n\(Self.config)".write(
                to: file,
                atomically: true,
                encoding: .utf8
            )
            let socket = directory.appendingPathComponent("agent.sock").path
            let agent = try Agent(
                options: AgentOptions(
                    configPath: file.path,
                    namespace: namespaces[0].name,
                    controlSocketPath: socket,
                    readyWaitLimit: .seconds(1),
                    logger: Logger(label: "test.connectivity")
                )
            )
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: agent)], logger: Logger(label: "test.group"))
            )
            let task = Task { try await group.run() }
            try await waitUntil("the control socket to exist") { FileManager.default.fileExists(atPath: socket) }
            let reply: ControlReply = try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result { try ControlClient(path: socket).request(.probe, interface: "wired0") }
                    )
                }
            }
            #expect(reply.ok == false)
            #expect(reply.error?.contains("no probe helper") == true, "\(reply.error ?? "")")
            await group.triggerGracefulShutdown()
            _ = try? await task.value
        }
    }
}
