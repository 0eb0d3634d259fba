// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathConfig

/// The administrators' three requests, written as configuration and evaluated by the core.
@Suite struct PolicyScenarioTests {
    func policy(_ text: String, _ name: String) throws -> PathPolicy {
        let configuration = try #require(ConfigurationFixtures.load(text))
        return try #require(configuration.policy(named: name))
    }

    // 1. "Only use a wired or Wi-Fi link": require an interface type.
    @Test func requiringATypeIgnoresOthers() throws {
        let policy = try policy(
            """
            [[policy]]
            name = "lan-only"
            require = ["wired", "wifi"]
            """,
            "lan-only"
        )
        let lteOnly = PathEvaluator(policy: policy).path(for: StateFixtures.state(StateFixtures.lte()))
        #expect(lteOnly.status == .unsatisfied)
        #expect(lteOnly.unsatisfiedReason == .requiredTypeAbsent)
        let both = PathEvaluator(policy: policy).path(
            for: StateFixtures.state(StateFixtures.lte(), StateFixtures.wifi())
        )
        #expect(both.status == .satisfied)
        #expect(both.primary?.name == "wlan0")
        #expect(both.availableInterfaces.map(\.name) == ["wlan0"])
    }

    // 2. "Use the modem only when nothing else works" (avoid) versus "never use the modem" (deny).
    static let metered = """
        [[policy]]
        name = "avoid"
        metered = "avoid"

        [[policy]]
        name = "deny"
        metered = "deny"
        """

    @Test func lteOnlyIsSatisfiedAndExpensiveUnderAvoid() throws {
        let path = PathEvaluator(policy: try policy(Self.metered, "avoid")).path(
            for: StateFixtures.state(StateFixtures.lte())
        )
        #expect(path.status == .satisfied)
        #expect(path.primary?.name == "wwan0")
        #expect(path.isExpensive)
    }

    @Test func lteOnlyIsUnsatisfiedUnderDeny() throws {
        let path = PathEvaluator(policy: try policy(Self.metered, "deny")).path(
            for: StateFixtures.state(StateFixtures.lte())
        )
        #expect(path.status == .unsatisfied)
        #expect(path.unsatisfiedReason == .meteredDenied)
        #expect(!path.isExpensive)
    }

    @Test func wifiWinsOverAPreferredMeteredModemUnderAvoid() throws {
        // The modem has the better metric; avoid still puts unmetered Wi-Fi first.
        let state = StateFixtures.state(StateFixtures.lte(metric: 50), StateFixtures.wifi(metric: 600))
        let path = PathEvaluator(policy: try policy(Self.metered, "avoid")).path(for: state)
        #expect(path.primary?.name == "wlan0")
        #expect(path.availableInterfaces.map(\.name) == ["wlan0", "wwan0"])
        #expect(!path.isExpensive)
    }

    // 3. "Prefer wired": reorders candidates against the kernel's metric.
    @Test func preferWiredBeatsALowerMetricWifi() throws {
        let state = StateFixtures.state(StateFixtures.wired(metric: 700), StateFixtures.wifi(metric: 100))
        let preferring = try policy(
            """
            [[policy]]
            name = "prefer-wired"
            prefer = ["wired", "wifi", "cellular"]

            [[policy]]
            name = "kernel"
            """,
            "prefer-wired"
        )
        let path = PathEvaluator(policy: preferring).path(for: state)
        #expect(path.primary?.name == "eth0")
        #expect(path.availableInterfaces.map(\.name) == ["eth0", "wlan0"])
        let kernel = PathEvaluator(policy: PathPolicy(name: "kernel")).path(for: state)
        #expect(kernel.primary?.name == "wlan0")
    }
}
