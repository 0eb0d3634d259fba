// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import NetPathControl
import TestSupport
import Testing

/// settle through the real agent: held events, the deadline timer, the net change.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentSettleTests {
    static func config(settle: String) -> String {
        """
        [agent]
        settle = "\(settle)"
        startup_events = false

        [[rule]]
        name = "watch"
        on = ["address-added", "address-removed", "changed"]
        run = ["10-record"]
        """
    }

    @Test("with settle, an address added and removed within the window dispatches nothing; a change after it does")
    func flapCollapses() async throws {
        try await NetworkNamespace.with(["settle", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let ns = namespaces[0]
            let agent = try await AgentHarness(namespace: ns, config: Self.config(settle: "1500ms"))
            defer { agent.stop() }
            try await agent.awaitReady()

            try ns.ip("addr", "add", "198.51.100.77/24", "dev", "up0")
            try ns.ip("addr", "del", "198.51.100.77/24", "dev", "up0")
            // After the window has passed with nothing more, a separate change: its hook run proves
            // the agent was dispatching, so the absence of the address events is the hold-down.
            try await Task.sleep(for: .milliseconds(2500))
            try ns.ip("link", "set", "up0", "mtu", "1400")
            try await agent.awaitHookRun("the MTU change after the window", timeout: .seconds(10)) {
                $0.hasPrefix("watch changed up0")
            }
            #expect(agent.hookRuns() == ["watch changed up0 0"], "\(agent.hookRuns())")
        }
    }

    @Test("with settle 0, the same flap dispatches both address events")
    func zeroPassesThrough() async throws {
        try await NetworkNamespace.with(["nosettle", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let ns = namespaces[0]
            let agent = try await AgentHarness(namespace: ns, config: Self.config(settle: "0s"))
            defer { agent.stop() }
            try await agent.awaitReady()

            try ns.ip("addr", "add", "198.51.100.77/24", "dev", "up0")
            try ns.ip("addr", "del", "198.51.100.77/24", "dev", "up0")
            try await agent.awaitHookRun("the address-removed hook", timeout: .seconds(10)) {
                $0.hasPrefix("watch address-removed up0")
            }
            #expect(agent.hookRuns().contains("watch address-added up0 0"), "\(agent.hookRuns())")
        }
    }

    @Test(
        "SIGTERM within the settle window: the held final states still reach the hook and the plugin before the agent exits"
    )
    func stopDispatchesHeldStates() async throws {
        try await NetworkNamespace.with(["settlestop", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let events = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-settlestop-\(UUID().uuidString.prefix(8)).jsonl"
            )
            defer { try? FileManager.default.removeItem(at: events) }
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: """
                    [agent]
                    settle = "5s"
                    startup_events = false

                    [plugin.event-log]
                    path = "\(events.path)"

                    [[rule]]
                    name = "final"
                    on = ["carrier-down", "down", "unsatisfied"]
                    run = ["10-record"]
                    plugins = ["event-log"]
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()

            try namespaces[1].ip("link", "set", "up0p", "down")
            // The agent publishes its state after handing the change to the settler: once status
            // shows up0 down, the events are held (5 s window), not yet dispatched.
            try await Self.awaitStatus(agent, "up0 without carrier") { report in
                report.interfaces.contains { $0.name == "up0" && !$0.carrier }
            }
            #expect(agent.hookRuns().isEmpty, "held, not dispatched yet: \(agent.hookRuns())")
            let stopping = ContinuousClock.now
            agent.process.send(SIGTERM)
            #expect(agent.process.wait() == 0)
            // Well before the window would have ended: the stop flushed the held events.
            #expect(ContinuousClock.now - stopping < .seconds(4), "stopped after \(ContinuousClock.now - stopping)")
            let runs = agent.hookRuns()
            #expect(runs.contains("final carrier-down up0 0"), "\(runs)")
            #expect(runs.contains("final down up0 0"), "\(runs)")
            #expect(runs.contains { $0.hasPrefix("final unsatisfied ") }, "\(runs)")
            let logged = try String(contentsOf: events, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
                .map { "\($0.name.rawValue) \($0.interface ?? "-")" }
            // Interface and policy are separate subjects, each in order, not ordered between them.
            #expect(logged.sorted() == ["carrier-down up0", "down up0", "unsatisfied -"], "\(logged)")
            #expect(logged.filter { $0.hasSuffix(" up0") } == ["carrier-down up0", "down up0"], "\(logged)")
            let log = await agent.stderr.all
            #expect(!log.contains { $0.contains("not dispatched") }, "\(log.filter { $0.contains("not dispatched") })")
        }
    }

    /// Asks the agent for its status until `predicate` holds; bounded, with a message naming `what`.
    static func awaitStatus(
        _ agent: AgentHarness,
        _ what: String,
        timeout: Duration = .seconds(10),
        where predicate: (StatusReport) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let reply = try ControlClient(path: agent.socketPath).request(.status)
            if let report = reply.status, predicate(report) { return }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out after \(timeout) waiting for the agent's status to show \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
