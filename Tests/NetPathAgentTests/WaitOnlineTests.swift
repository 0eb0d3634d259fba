// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl wait-online` against a real netpathd in namespaces: each option, the exit
/// statuses of nm-online (0 online, 1 timed out, 2 anything else), and an agent that comes later.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct WaitOnlineTests {
    /// A running `netpathctl wait-online` in `namespace`, its stderr recorded.
    final class Waiter: Sendable {
        let process: RunningProcess
        let stderr = Recorder<String>()
        let stdout = Recorder<String>()

        init(_ namespace: NetworkNamespace, _ arguments: [String]) async throws {
            process = try RunningProcess(
                ["ip", "netns", "exec", namespace.name, BuiltProducts.path("netpathctl"), "wait-online"] + arguments
            )
            await stderr.record(process.stderrLines)
            await stdout.record(process.stdoutLines)
        }

        /// How it ended: its exit status and what it printed.
        struct Finished {
            var status: Int32
            var stdout: [String]
            var stderr: [String]
        }

        /// Waits for its exit, failing the test when it has not exited within `timeout`.
        func finish(within timeout: Duration) async throws -> Finished {
            guard let status = await process.exitStatus(within: timeout) else {
                process.terminate()
                throw TestFailure("wait-online had not exited within \(timeout); stderr: \(await stderr.all)")
            }
            // The pipes close at exit: their last lines are in once the recorders have finished.
            _ = try? await stderr.next("the end of stderr", timeout: .seconds(5)) { _ in false }
            _ = try? await stdout.next("the end of stdout", timeout: .seconds(5)) { _ in false }
            return Finished(status: status, stdout: await stdout.all, stderr: await stderr.all)
        }

        /// Waits for its "waiting: …" line: it has read the agent's state and follows its events.
        func awaitWaiting(_ what: String = "waiting: ") async throws -> String {
            try await stderr.next("wait-online's \"\(what)\" line") { $0.contains(what) }
        }
    }

    @Test("satisfied at start: exit 0 at once, saying through what")
    func satisfiedAtStart() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let waiter = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--timeout", "30"])
            let waiterEnd = try await waiter.finish(within: .seconds(10))
            #expect(waiterEnd.status == 0, "\(waiterEnd.stderr)")
            #expect(waiterEnd.stdout == ["online: policy default via up0 (other)"])
        }
    }

    @Test("satisfied later: it waits, and exits 0 once a default route makes the policy satisfied")
    func satisfiedLater() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces, defaultRoute: false)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let waiter = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--timeout", "60"])
            let line = try await waiter.awaitWaiting()
            #expect(line.contains("policy default is unsatisfied"), "\(line)")
            #expect(waiter.process.isRunning)
            try namespaces[0].ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")
            let waiterEnd = try await waiter.finish(within: .seconds(10))
            #expect(waiterEnd.status == 0, "\(waiterEnd.stderr)")
            #expect(waiterEnd.stdout == ["online: policy default via up0 (other)"])
        }
    }

    @Test("never satisfied: exit 1 after --timeout, with the reason on stderr")
    func neverSatisfied() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces, defaultRoute: false)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let started = ContinuousClock.now
            let waiter = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--timeout", "1"])
            let waiterEnd = try await waiter.finish(within: .seconds(10))
            #expect(waiterEnd.status == 1, "\(waiterEnd.stderr)")
            #expect(ContinuousClock.now - started >= .seconds(1), "it gave up before its timeout")
            let errors = waiterEnd.stderr
            #expect(
                errors.last
                    == "netpathctl wait-online: not online within 1 s: policy default is unsatisfied (no-route)",
                "\(errors)"
            )
            // -q: the same exit status, nothing printed.
            let quiet = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--timeout", "1", "-q"])
            let quietEnd = try await quiet.finish(within: .seconds(10))
            #expect(quietEnd.status == 1, "\(quietEnd.stderr)")
            #expect(quietEnd.stderr.isEmpty && quietEnd.stdout.isEmpty)
        }
    }

    @Test("--policy: all named must be satisfied, --any one of them; a policy netpathd lacks is exit 2 at once")
    func policies() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: """
                    [[policy]]
                    name = "any"

                    [[policy]]
                    name = "wifi-only"
                    require = ["wifi"]
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            let socket = ["--socket", agent.socketPath, "--timeout", "1"]
            let both = try await Waiter(namespaces[0], socket + ["--policy", "any", "--policy", "wifi-only"])
            let bothEnd = try await both.finish(within: .seconds(10))
            #expect(bothEnd.status == 1, "\(bothEnd.stderr)")
            #expect(bothEnd.stderr.last?.contains("policy wifi-only is unsatisfied (required-type-absent)") == true)
            let either = try await Waiter(
                namespaces[0],
                socket + ["--policy", "any", "--policy", "wifi-only", "--any"]
            )
            let eitherEnd = try await either.finish(within: .seconds(10))
            #expect(eitherEnd.status == 0, "\(eitherEnd.stderr)")
            #expect(eitherEnd.stdout == ["online: policy any via up0 (other)"])
            let typo = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--policy", "wifi_only"])
            let typoEnd = try await typo.finish(within: .seconds(10))
            #expect(typoEnd.status == 2, "\(typoEnd.stderr)")
            #expect(
                typoEnd.stderr.last
                    == "netpathctl wait-online: netpathd has no policy named \"wifi_only\" (its policies: any, wifi-only)"
            )
        }
    }

    @Test("-i IFACE:MIN:MAX and -o: the interface's operational state must be within the range")
    func interfaceStates() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let socket = ["--socket", agent.socketPath, "--timeout", "1"]
            let routable = try await Waiter(namespaces[0], socket + ["-i", "up0:routable"])
            let routableEnd = try await routable.finish(within: .seconds(10))
            #expect(routableEnd.status == 0, "\(routableEnd.stderr)")
            let capped = try await Waiter(namespaces[0], socket + ["-i", "up0:carrier:degraded"])
            let cappedEnd = try await capped.finish(within: .seconds(10))
            #expect(cappedEnd.status == 1, "\(cappedEnd.stderr)")
            #expect(
                cappedEnd.stderr.last
                    == "netpathctl wait-online: not online within 1 s: up0 is routable, not carrier:degraded"
            )
            let missing = try await Waiter(namespaces[0], socket + ["-i", "up0", "-i", "eth9"])
            let missingEnd = try await missing.finish(within: .seconds(10))
            #expect(missingEnd.status == 1, "\(missingEnd.stderr)")
            #expect(missingEnd.stderr.last?.hasSuffix(": eth9 is missing") == true, "\(missingEnd.stderr)")
            let oneOf = try await Waiter(namespaces[0], socket + ["-i", "up0", "-i", "eth9", "--any"])
            let oneOfEnd = try await oneOf.finish(within: .seconds(10))
            #expect(oneOfEnd.status == 0, "\(oneOfEnd.stderr)")
            // -o without -i: at least one interface other than loopback (and --ignore's).
            let any = try await Waiter(namespaces[0], socket + ["-o", "routable"])
            let anyEnd = try await any.finish(within: .seconds(10))
            #expect(anyEnd.status == 0, "\(anyEnd.stderr)")
            let ignored = try await Waiter(namespaces[0], socket + ["-o", "routable", "--ignore", "up*"])
            let ignoredEnd = try await ignored.finish(within: .seconds(10))
            #expect(ignoredEnd.status == 1, "\(ignoredEnd.stderr)")
            // IPv6 on up0 is only link-local: -6 asks the interface for a usable IPv6 address.
            let ipv6 = try await Waiter(namespaces[0], socket + ["-i", "up0", "-6"])
            let ipv6End = try await ipv6.finish(within: .seconds(10))
            #expect(ipv6End.status == 1, "\(ipv6End.stderr)")
            #expect(ipv6End.stderr.last?.contains("has no IPv6") == true, "\(ipv6End.stderr)")
        }
    }

    @Test("no agent: exit 2 after the timeout; an agent that comes later is waited for, through its socket appearing")
    func noAgentYet() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let scratch = try ScratchDirectory.make("np-wait")
            defer { try? FileManager.default.removeItem(at: scratch) }
            // Neither the socket nor its directory exist yet, as before systemd makes /run/netpath.
            let socket = scratch.appendingPathComponent("run/netpathd.sock").path
            let started = ContinuousClock.now
            let none = try await Waiter(namespaces[0], ["--socket", socket, "--timeout", "1"])
            let noneEnd = try await none.finish(within: .seconds(10))
            #expect(noneEnd.status == 2, "\(noneEnd.stderr)")
            #expect(ContinuousClock.now - started >= .seconds(1), "it gave up before its timeout")
            #expect(
                noneEnd.stderr.last?.hasPrefix(
                    "netpathctl wait-online: no netpathd answered on \(socket) within 1 s ("
                )
                    == true,
                "\(noneEnd.stderr)"
            )

            let waiter = try await Waiter(namespaces[0], ["--socket", socket, "--timeout", "60"])
            _ = try await waiter.awaitWaiting("waiting for netpathd to answer on \(socket)")
            let agent = try await AgentHarness(namespace: namespaces[0], config: "", socketPath: socket)
            defer { agent.stop() }
            let waiterEnd = try await waiter.finish(within: .seconds(20))
            #expect(waiterEnd.status == 0, "\(waiterEnd.stderr)")
            #expect(waiterEnd.stdout == ["online: policy default via up0 (other)"])
        }
    }

    @Test("--connectivity without [connectivity] is exit 2 at once, saying why")
    func connectivityWithoutProbing() async throws {
        try await NetworkNamespace.with(["wo", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let waiter = try await Waiter(namespaces[0], ["--socket", agent.socketPath, "--connectivity", "full"])
            let waiterEnd = try await waiter.finish(within: .seconds(10))
            #expect(waiterEnd.status == 2, "\(waiterEnd.stderr)")
            #expect(
                waiterEnd.stderr.last?.contains(
                    "--connectivity full needs connectivity probing, and netpathd's configuration has no [connectivity] table"
                ) == true,
                "\(waiterEnd.stderr)"
            )
        }
    }
}

/// `wait-online --connectivity` with the real probe helper against a real endpoint: a path
/// that is satisfied behind a captive portal is not online for `--connectivity full`.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct WaitOnlineConnectivityTests {
    @Test(
        "satisfied behind a portal: --connectivity full keeps waiting (exit 1 at the timeout), then exits 0 once the portal lets go"
    )
    func portalThenFull() async throws {
        let choices = try ScratchDirectory.make("np-choices")
        defer { try? FileManager.default.removeItem(at: choices) }
        // up0 (10.9.0.1) gets the portal's redirect first; up1's answers cannot come back.
        try "/302".write(to: choices.appendingPathComponent("10.9.0.1"), atomically: true, encoding: .utf8)
        try await ConnectivityEndToEndTests.withUplinks(choices: choices) { host, server in
            try server.ip("route", "add", "blackhole", "10.8.0.1/32")
            let agent = try await AgentHarness(
                namespace: host,
                config: """
                    [connectivity]
                    uri = "http://10.7.0.1:8080/chosen"
                    timeout = "2s"
                    interval = "1h"
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            let socket = ["--socket", agent.socketPath]
            // --connectivity portal accepts the portal: it returns once the first probe found it.
            let portal = try await WaitOnlineTests.Waiter(
                host,
                socket + ["--connectivity", "portal", "--timeout", "20"]
            )
            let portalEnd = try await portal.finish(within: .seconds(30))
            #expect(portalEnd.status == 0, "\(portalEnd.stderr)")
            let timedOut = try await WaitOnlineTests.Waiter(
                host,
                socket + ["--connectivity", "full", "--timeout", "1"]
            )
            let timedOutEnd = try await timedOut.finish(within: .seconds(10))
            #expect(timedOutEnd.status == 1, "\(timedOutEnd.stderr)")
            #expect(
                timedOutEnd.stderr.last
                    == "netpathctl wait-online: not online within 1 s: policy default via up0 (other) has connectivity portal, not full",
                "\(timedOutEnd.stderr)"
            )

            let waiter = try await WaitOnlineTests.Waiter(host, socket + ["--connectivity", "full", "--timeout", "60"])
            _ = try await waiter.awaitWaiting()
            try "/204".write(to: choices.appendingPathComponent("10.9.0.1"), atomically: true, encoding: .utf8)
            let probe = try ControlSocketTests.netpathctl(host, ["probe", "up0"] + socket)
            #expect(probe.status == 0, "\(probe.stderr)")
            let waiterEnd = try await waiter.finish(within: .seconds(20))
            #expect(waiterEnd.status == 0, "\(waiterEnd.stderr)")
            #expect(waiterEnd.stdout == ["online: policy default via up0 (other)"])
        }
    }
}
