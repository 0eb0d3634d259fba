import Foundation
import TestSupport
import Testing

/// settle through the real agent: held events, the deadline timer, the net change.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
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
}
