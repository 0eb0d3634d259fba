// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// An event reduced to what a hook would switch on: scope, name and subject.
private struct Step: Hashable, CustomStringConvertible {
    var scope: Event.Scope
    var name: Event.Name
    var subject: String

    static func interface(_ name: Event.Name, _ interface: String) -> Step {
        Step(scope: .interface, name: name, subject: interface)
    }

    static func path(_ name: Event.Name, _ policy: String = "default") -> Step {
        Step(scope: .path, name: name, subject: policy)
    }

    var description: String { "\(scope) \(name) \(subject)" }
}

private func steps(_ events: [Event]) -> [Step] {
    events.map {
        Step(scope: $0.scope, name: $0.name, subject: $0.scope == .path ? $0.policy ?? "" : $0.interface ?? "")
    }
}

@Suite("PathTracker")
struct PathTrackerTests {
    @Test(
        "interface events pair the lists by index the same way whether they come in index order (merged) or not (looked up)"
    )
    func interfaceEventsInAnyOrder() {
        var generator = SystemRandomNumberGenerator()
        func uplinks(_ indexes: [Int32]) -> [Interface] {
            indexes.map { index in
                Sample.uplink(
                    index,
                    Bool.random(using: &generator) ? "if\(index)" : "renamed\(index)",
                    Bool.random(using: &generator) ? .wired : .wifi,
                    metric: [100, 600].randomElement(using: &generator)!,
                    ipv4: Bool.random(using: &generator),
                    ipv6: Bool.random(using: &generator),
                    carrier: Bool.random(using: &generator),
                    mtu: [1500, 9000].randomElement(using: &generator)!
                )
            }
        }
        for _ in 0..<1_000 {
            let all: [Int32] = [1, 2, 3, 5, 8, 13]
            let old = uplinks(all.filter { _ in Bool.random(using: &generator) })
            let new = uplinks(all.filter { _ in Bool.random(using: &generator) })
            let merged = PathTracker.interfaceEvents(from: old, to: new, at: Sample.time)
            let lookedUp = PathTracker.interfaceEvents(from: old.reversed(), to: new.reversed(), at: Sample.time)
            #expect(merged == lookedUp, "\(old.map(\.index)) -> \(new.map(\.index))")
            // Every index of either list has its events, in index order.
            let indexes = merged.compactMap(\.interfaceState?.index)
            #expect(indexes == indexes.sorted())
            if merged != lookedUp { return }
        }
    }

    private let later = Sample.time.addingTimeInterval(1)

    private func tracker(_ interfaces: [Interface], policies: [PathPolicy] = [.default]) -> PathTracker {
        var tracker = PathTracker(policies: policies)
        _ = tracker.start(with: SystemState(interfaces: interfaces), at: Sample.time)
        return tracker
    }

    // MARK: Link state

    @Test func vethToggleGivesCarrierDownDownUnsatisfiedThenCarrierUpUpSatisfied() {
        let veth = Sample.uplink(7, "veth0", .other, kind: "veth")
        var t = tracker([Sample.loopback, veth])

        var lost = veth
        lost.carrier = false
        lost.operState = .lowerlayerdown
        let down = t.update(to: SystemState(interfaces: [Sample.loopback, lost]), at: later)
        #expect(steps(down) == [.interface(.carrierDown, "veth0"), .interface(.down, "veth0"), .path(.unsatisfied)])
        #expect(down.last?.path?.unsatisfiedReason == .noInterface)
        #expect(down.last?.previousInterface == "veth0")
        #expect(down.last?.interface == nil)

        let up = t.update(to: SystemState(interfaces: [Sample.loopback, veth]), at: later)
        #expect(steps(up) == [.interface(.carrierUp, "veth0"), .interface(.up, "veth0"), .path(.satisfied)])
        #expect(up.last?.interface == "veth0")
        #expect(up.last?.interfaceType == .other)
        #expect(up.allSatisfy { !$0.startup && $0.time == later })
    }

    @Test func unchangedStateGivesNoEvents() {
        var t = tracker([Sample.loopback, Sample.eth0()])
        #expect(t.update(to: SystemState(interfaces: [Sample.loopback, Sample.eth0()]), at: later).isEmpty)
    }

    @Test func operStateAloneIsNotAnEvent() {
        var t = tracker([Sample.eth0()])
        var dormant = Sample.eth0()
        dormant.operState = .dormant
        #expect(t.update(to: SystemState(interfaces: [dormant]), at: later).isEmpty)
    }

    // MARK: Links coming and going

    @Test func addedLinkReportsItsFactsThenUpThenThePath() {
        var t = tracker([Sample.loopback])
        let events = t.update(to: SystemState(interfaces: [Sample.loopback, Sample.eth0()]), at: later)
        #expect(
            steps(events) == [
                .interface(.added, "eth0"), .interface(.carrierUp, "eth0"), .interface(.addressAdded, "eth0"),
                .interface(.up, "eth0"), .path(.satisfied),
            ]
        )
        #expect(events[2].address == "10.0.2.2/24")
        #expect(events[0].interfaceState == Sample.eth0())
    }

    @Test func addedLinkWithoutCarrierIsOnlyAdded() {
        var t = tracker([])
        let cold = Interface(index: 9, name: "eth9", type: .wired, adminUp: false, carrier: false)
        #expect(steps(t.update(to: SystemState(interfaces: [cold]), at: later)) == [.interface(.added, "eth9")])
    }

    @Test func removedLinkGoesDownThenIsRemoved() {
        var t = tracker([Sample.loopback, Sample.eth0()])
        let events = t.update(to: SystemState(interfaces: [Sample.loopback]), at: later)
        #expect(steps(events) == [.interface(.down, "eth0"), .interface(.removed, "eth0"), .path(.unsatisfied)])
        #expect(events[2].previousInterface == "eth0")
    }

    @Test func removingTheBackupLinkChangesTheAvailableList() {
        var t = tracker([Sample.eth0(metric: 100), Sample.wlan0(metric: 600)])
        let events = t.update(to: SystemState(interfaces: [Sample.eth0(metric: 100)]), at: later)
        #expect(steps(events) == [.interface(.down, "wlan0"), .interface(.removed, "wlan0"), .path(.changed)])
        #expect(events[2].changes == ["available_interfaces"])
        #expect(events[2].interface == "eth0")
    }

    // MARK: Addresses

    @Test func secondAddressIsOnlyAddressAdded() {
        var t = tracker([Sample.eth0()])
        var more = Sample.eth0()
        more.addresses = (more.addresses + ["10.0.2.99/24"]).sorted()
        let events = t.update(to: SystemState(interfaces: [more]), at: later)
        #expect(steps(events) == [.interface(.addressAdded, "eth0")])
        #expect(events.first?.address == "10.0.2.99/24")
        #expect(events.first?.interfaceState == more)
    }

    @Test func removedAddressIsAddressRemoved() {
        var two = Sample.eth0()
        two.addresses = (two.addresses + ["10.0.2.99/24"]).sorted()
        var t = tracker([two])
        let events = t.update(to: SystemState(interfaces: [Sample.eth0()]), at: later)
        #expect(steps(events) == [.interface(.addressRemoved, "eth0")])
        #expect(events.first?.address == "10.0.2.99/24")
    }

    @Test func losingTheOnlyAddressAndItsRouteTakesTheLinkDown() {
        var t = tracker([Sample.eth0()])
        var bare = Sample.eth0()
        bare.addresses = []
        bare.defaultRoutes = []  // the kernel drops IPv4 routes with the last IPv4 address
        let events = t.update(to: SystemState(interfaces: [bare]), at: later)
        #expect(
            steps(events) == [
                .interface(.addressRemoved, "eth0"), .interface(.changed, "eth0"), .interface(.down, "eth0"),
                .path(.unsatisfied),
            ]
        )
        #expect(events[1].changes == ["default_routes"])
        #expect(events[3].path?.status == .requiresConnection)
    }

    @Test func dhcpCompletingMovesFromRequiresConnectionToSatisfied() {
        let pending = Interface(index: 2, name: "eth0", type: .wired)
        var t = tracker([pending])
        #expect(t.paths.first?.status == .requiresConnection)
        let events = t.update(to: SystemState(interfaces: [Sample.eth0()]), at: later)
        #expect(
            steps(events) == [
                .interface(.addressAdded, "eth0"), .interface(.changed, "eth0"), .interface(.up, "eth0"),
                .path(.satisfied),
            ]
        )
    }

    @Test func unsatisfiedPathReportsANewReason() {
        let down = Interface(index: 2, name: "eth0", type: .wired, carrier: false)
        var t = tracker([down])
        #expect(t.paths.first?.unsatisfiedReason == .noInterface)
        let pending = Interface(index: 2, name: "eth0", type: .wired)
        let events = t.update(to: SystemState(interfaces: [pending]), at: later)
        #expect(steps(events) == [.interface(.carrierUp, "eth0"), .path(.unsatisfied)])
        #expect(events.last?.path?.status == .requiresConnection)
    }

    // MARK: Changes

    @Test func mtuChangeIsInterfaceChangedWithMtu() {
        var t = tracker([Sample.eth0()])
        var jumbo = Sample.eth0()
        jumbo.mtu = 9000
        let events = t.update(to: SystemState(interfaces: [jumbo]), at: later)
        #expect(steps(events) == [.interface(.changed, "eth0")])
        #expect(events.first?.changes == ["mtu"])
        #expect(events.first?.interfaceState?.mtu == 9000)
    }

    @Test func defaultRouteChangeWithoutPrimarySwitchIsOnlyInterfaceChanged() {
        var t = tracker([Sample.eth0(metric: 100), Sample.wlan0(metric: 600)])
        let events = t.update(
            to: SystemState(interfaces: [Sample.eth0(metric: 100), Sample.wlan0(metric: 700)]),
            at: later
        )
        #expect(steps(events) == [.interface(.changed, "wlan0")])
        #expect(events.first?.changes == ["default_routes"])
    }

    @Test func metricChangeThatSwitchesPrimaryIsPathChangedWithPreviousInterface() {
        var t = tracker([Sample.eth0(metric: 100), Sample.wlan0(metric: 600)])
        let events = t.update(
            to: SystemState(interfaces: [Sample.eth0(metric: 1000), Sample.wlan0(metric: 600)]),
            at: later
        )
        #expect(steps(events) == [.interface(.changed, "eth0"), .path(.changed)])
        let path = events[1]
        #expect(path.interface == "wlan0")
        #expect(path.interfaceType == .wifi)
        #expect(path.previousInterface == "eth0")
        #expect(path.changes.contains("primary"))
        #expect(path.changes.contains("primary_ipv4"))
        #expect(path.changes.contains("gateways"))
        #expect(path.path?.primary?.name == "wlan0")
    }

    @Test func meteredChangeIsInterfaceChangedAndMakesThePathExpensive() {
        var t = tracker([Sample.eth0()])
        var tether = Sample.eth0()
        tether.isMetered = true
        tether.meteredReason = .override
        let events = t.update(to: SystemState(interfaces: [tether]), at: later)
        #expect(steps(events) == [.interface(.changed, "eth0"), .path(.changed)])
        #expect(events[0].changes == ["metered"])
        #expect(events[1].changes == ["is_expensive"])
        #expect(events[1].path?.isExpensive == true)
    }

    @Test func renameIsChangedWithThePreviousName() {
        var t = tracker([Sample.eth0()])
        var renamed = Sample.eth0()
        renamed.name = "lan0"
        let events = t.update(to: SystemState(interfaces: [renamed]), at: later)
        #expect(steps(events).first == .interface(.changed, "lan0"))
        #expect(events.first?.changes == ["name"])
        #expect(events.first?.previousInterface == "eth0")
    }

    @Test func eventsForSeveralLinksComeInIndexOrderBeforePathEvents() {
        var t = tracker([Sample.eth0(metric: 100), Sample.wlan0(metric: 600)])
        var eth = Sample.eth0(metric: 100)
        eth.carrier = false
        var wlan = Sample.wlan0(metric: 600)
        wlan.mtu = 1400
        let events = t.update(to: SystemState(interfaces: [wlan, eth]), at: later)
        #expect(
            steps(events) == [
                .interface(.carrierDown, "eth0"), .interface(.down, "eth0"), .interface(.changed, "wlan0"),
                .path(.changed),
            ]
        )
        #expect(events.last?.previousInterface == "eth0")
    }

    // MARK: Policies

    @Test func eachPolicyGetsItsOwnPathEvents() {
        let policies = [PathPolicy(name: "any"), PathPolicy(name: "unmetered", metered: .deny)]
        var t = tracker([Sample.wwan0()], policies: policies)
        #expect(t.paths.map(\.status) == [.satisfied, .unsatisfied])
        let events = t.update(to: SystemState(interfaces: [Sample.wwan0(), Sample.wlan0(metric: 600)]), at: later)
        let pathSteps = steps(events).filter { $0.scope == .path }
        #expect(pathSteps == [.path(.changed, "any"), .path(.satisfied, "unmetered")])
    }

    @Test func settingPoliciesReportsTheirPaths() {
        var t = tracker([Sample.wwan0()])
        let events = t.setPolicies([PathPolicy(name: "default", metered: .deny), PathPolicy(name: "new")], at: later)
        #expect(steps(events) == [.path(.unsatisfied, "default"), .path(.satisfied, "new")])
        #expect(events[0].path?.unsatisfiedReason == .meteredDenied)
    }

    @Test func noPoliciesMeansTheDefaultPolicy() {
        #expect(PathTracker(policies: []).policies == [.default])
    }

    // MARK: Startup

    @Test func startupReportsEveryLinkAndPathFlaggedStartup() {
        var t = PathTracker(policies: [.default])
        let down = Sample.uplink(5, "eth1", .wired, carrier: false)
        let events = t.start(with: SystemState(interfaces: [Sample.eth0(), Sample.loopback, down]), at: Sample.time)
        #expect(
            steps(events) == [
                .interface(.down, "lo"), .interface(.up, "eth0"), .interface(.down, "eth1"), .path(.satisfied),
            ]
        )
        #expect(events.allSatisfy { $0.startup && $0.time == Sample.time })
        #expect(events.last?.interface == "eth0")
        #expect(events.last?.previousInterface == nil)
    }

    @Test func startupWithNothingUsableReportsUnsatisfied() {
        var t = PathTracker()
        let events = t.start(with: SystemState(interfaces: [Sample.loopback]), at: Sample.time)
        #expect(steps(events) == [.interface(.down, "lo"), .path(.unsatisfied)])
        #expect(events.allSatisfy { $0.startup })
    }

    @Test func updatesAfterStartupAreNotStartup() {
        var t = tracker([Sample.loopback])
        let events = t.update(to: SystemState(interfaces: [Sample.loopback, Sample.eth0()]), at: later)
        #expect(!events.isEmpty)
        #expect(events.allSatisfy { !$0.startup })
    }

    // MARK: Emitting as events are known

    @Test func emittingHandsOutInterfaceEventsThenPathEventsInOrder() {
        let veth = Sample.uplink(7, "veth0", .other, kind: "veth")
        var lost = veth
        lost.carrier = false
        lost.operState = .lowerlayerdown
        var t = tracker([Sample.loopback, veth])
        let changes: [([Interface], [Step])] = [
            (
                [Sample.loopback, lost],
                [.interface(.carrierDown, "veth0"), .interface(.down, "veth0"), .path(.unsatisfied)]
            ),
            ([Sample.loopback, veth], [.interface(.carrierUp, "veth0"), .interface(.up, "veth0"), .path(.satisfied)]),
            ([Sample.loopback], [.interface(.down, "veth0"), .interface(.removed, "veth0"), .path(.unsatisfied)]),
        ]
        for (interfaces, expected) in changes {
            var emitted: [Event] = []
            t.update(to: SystemState(interfaces: interfaces), at: later) { emitted.append($0) }
            #expect(steps(emitted) == expected)
            #expect(t.state.interfaces == interfaces, "the tracker moved to the new state")
        }
    }

    @Test func emittingThatThrowsLeavesTheTrackerAsItWas() {
        struct Stop: Error {}
        let veth = Sample.uplink(7, "veth0", .other, kind: "veth")
        var t = tracker([Sample.loopback, veth])
        let before = t.paths
        #expect(throws: Stop.self) {
            try t.update(to: SystemState(interfaces: [Sample.loopback]), at: later) { _ in throw Stop() }
        }
        #expect(t.paths == before)
        // Not swallowed: the same change is still ahead, whole.
        let events = t.update(to: SystemState(interfaces: [Sample.loopback]), at: later)
        #expect(steps(events) == [.interface(.down, "veth0"), .interface(.removed, "veth0"), .path(.unsatisfied)])
    }
}
