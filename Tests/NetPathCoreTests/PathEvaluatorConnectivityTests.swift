// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// `require_connectivity` in evaluation, and the connectivity a path and its events carry.
struct PathEvaluatorConnectivityTests {
    static func with(_ interface: Interface, _ c: Connectivity, evidence: String? = nil) -> Interface {
        var copy = interface
        copy.connectivity = c
        copy.connectivityEvidence = evidence ?? "probe said \(c)"
        if c == .portal { copy.portalURL = "http://portal.test/login" }
        return copy
    }

    static let lte = Sample.uplink(4, "wwan0", .cellular, metric: 700, metered: true)
    static let policy = PathPolicy(name: "uplink", prefer: [.wired, .cellular], requireConnectivity: .full)

    @Test("require_connectivity = full: a wired link behind a portal is rejected with the evidence, LTE takes over")
    func portalWiredFallsBackToLTE() {
        let state = SystemState(interfaces: [
            Self.with(Sample.eth0(), .portal, evidence: "HTTP 302 to http://portal.test/login"),
            Self.with(Self.lte, .full),
        ])
        let evaluation = PathEvaluator(policy: Self.policy).evaluate(state)
        #expect(evaluation.path.primary?.name == "wwan0")
        #expect(evaluation.path.connectivity == .full)
        let eth0 = evaluation.verdicts.first { $0.interface.name == "eth0" }
        #expect(eth0?.outcome == .rejected(.connectivity))
        #expect(eth0?.detail.contains("HTTP 302 to http://portal.test/login") == true)
    }

    @Test("when the wired link recovers it is the primary again")
    func recovers() {
        let state = SystemState(interfaces: [Self.with(Sample.eth0(), .full), Self.with(Self.lte, .full)])
        #expect(PathEvaluator(policy: Self.policy).path(for: state).primary?.name == "eth0")
    }

    @Test("unknown (not probed yet) is not held to the requirement; portal passes require_connectivity = portal")
    func unknownAndPortal() {
        let unprobed = SystemState(interfaces: [Sample.eth0()])
        #expect(PathEvaluator(policy: Self.policy).path(for: unprobed).primary?.name == "eth0")
        let portal = SystemState(interfaces: [Self.with(Sample.eth0(), .portal)])
        var lenient = Self.policy
        lenient.requireConnectivity = .portal
        let path = PathEvaluator(policy: lenient).path(for: portal)
        #expect(path.primary?.name == "eth0")
        #expect(path.connectivity == .portal)
        #expect(path.portalURL == "http://portal.test/login")
    }

    @Test(
        "unknown after a probe ended (the helper failed) is held to the requirement: LTE takes over, then unsatisfied"
    )
    func failedProbeIsHeldToTheRequirement() {
        let failed = Self.with(Sample.eth0(), .unknown, evidence: "probe helper exited (signal 9)")
        #expect(failed.connectivityProbeFailed && !Sample.eth0().connectivityProbeFailed)
        let evaluation = PathEvaluator(policy: Self.policy).evaluate(
            SystemState(interfaces: [failed, Self.with(Self.lte, .full)])
        )
        #expect(evaluation.path.primary?.name == "wwan0")
        let eth0 = evaluation.verdicts.first { $0.interface.name == "eth0" }
        #expect(eth0?.outcome == .rejected(.connectivity))
        #expect(eth0?.detail.contains("(the probe failed)") == true, "\(eth0?.detail ?? "")")
        #expect(eth0?.detail.contains("probe helper exited (signal 9)") == true)
        let alone = PathEvaluator(policy: Self.policy).path(for: SystemState(interfaces: [failed]))
        #expect(alone.status == .unsatisfied && alone.unsatisfiedReason == .noConnectivity)
        // Without a requirement the failed probe changes nothing.
        #expect(
            PathEvaluator(policy: PathPolicy(name: "any")).path(for: SystemState(interfaces: [failed])).primary?.name
                == "eth0"
        )
    }

    @Test("nothing left with the connectivity asked for: unsatisfied, no-connectivity")
    func unsatisfiedReason() {
        let state = SystemState(interfaces: [
            Sample.loopback, Self.with(Sample.eth0(), .none), Self.with(Self.lte, .limited),
        ])
        let path = PathEvaluator(policy: Self.policy).path(for: state)
        #expect(path.status == .unsatisfied)
        #expect(path.unsatisfiedReason == .noConnectivity)
    }

    @Test("connectivity-changed: on the interface with old and new state, and on the path of its primary")
    func trackerEvents() {
        var tracker = PathTracker(policies: [PathPolicy(name: "default")])
        _ = tracker.start(with: SystemState(interfaces: [Sample.eth0()]), at: Date())
        let events = tracker.update(
            to: SystemState(interfaces: [Self.with(Sample.eth0(), .portal)]),
            at: Date()
        )
        let names = events.map { "\($0.scope.rawValue) \($0.name)" }
        #expect(names == ["interface connectivity-changed", "path connectivity-changed"])
        #expect(events.allSatisfy { $0.previousConnectivity == .unknown && $0.connectivity == .portal })
        #expect(events[1].path?.portalURL == "http://portal.test/login")
    }

    @Test("a new round-trip time alone is no event")
    func qualityAloneIsNoEvent() {
        var tracker = PathTracker(policies: [PathPolicy(name: "default")])
        var eth0 = Self.with(Sample.eth0(), .full)
        eth0.roundTrip = .milliseconds(10)
        _ = tracker.start(with: SystemState(interfaces: [eth0]), at: Date())
        eth0.roundTrip = .milliseconds(30)
        #expect(tracker.update(to: SystemState(interfaces: [eth0]), at: Date()).isEmpty)
    }

    @Test("a queued connectivity-changed is superseded by a later one, which keeps the older previous state")
    func obsolescence() {
        let older = Event(
            time: Date(),
            name: .connectivityChanged,
            scope: .interface,
            interface: "eth0",
            connectivity: .portal,
            previousConnectivity: Connectivity.none
        )
        let newer = Event(
            time: Date(),
            name: .connectivityChanged,
            scope: .interface,
            interface: "eth0",
            connectivity: .full,
            previousConnectivity: .portal
        )
        #expect(newer.supersedes(older))
        #expect(newer.absorbing(older).previousConnectivity == Connectivity.none)
    }
}
