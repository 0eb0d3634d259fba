// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import NetPathCore

@Suite struct SettlerTests {
    let t0 = ContinuousClock.now

    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    /// Drives a PathTracker through `states` and returns the events of each step.
    func transitions(_ states: [SystemState], policies: [PathPolicy] = [.default]) -> (
        startup: [Event], steps: [[Event]]
    ) {
        var tracker = PathTracker(policies: policies)
        let startup = tracker.start(with: states[0], at: Sample.time)
        let steps = states.dropFirst().map { tracker.update(to: $0, at: Sample.time) }
        return (startup, steps)
    }

    func names(_ events: [Event]) -> [String] {
        events.map { "\($0.subject) \($0.name)" }
    }

    @Test func aZeroWindowPassesEverythingThroughAtOnce() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down, up, down])
        var settler = Settler(window: .zero)
        #expect(settler.receive(startup, at: at(0)) == startup)
        for (i, step) in steps.enumerated() {
            #expect(settler.receive(step, at: at(i)) == step)
        }
        #expect(settler.isIdle)
        #expect(settler.nextDeadline == nil)
    }

    @Test func startupEventsPassThroughEvenWithAWindow() {
        let (startup, _) = transitions([SystemState(interfaces: [Sample.eth0()])])
        var settler = Settler(window: .seconds(2))
        #expect(settler.receive(startup, at: at(0)) == startup)
        #expect(settler.isIdle)
    }

    @Test func aFlapWithinTheWindowCollapsesToNothing() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down, up, down, up])
        var settler = Settler(window: .seconds(2))
        _ = settler.receive(startup, at: at(0))
        for (i, step) in steps.enumerated() {
            #expect(settler.receive(step, at: at(100 + i * 500)).isEmpty)
        }
        // Quiet from 1600 ms: due at 3600 ms.
        #expect(settler.nextDeadline == at(3600))
        #expect(settler.tick(at: at(3599)).isEmpty)
        #expect(settler.tick(at: at(3600)).isEmpty)
        #expect(settler.isIdle)
    }

    @Test func aFlapThatChangesAPropertyBecomesOneChanged() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let upJumbo = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, mtu: 9000)])
        let (startup, steps) = transitions([up, down, upJumbo])
        var settler = Settler(window: .seconds(1))
        _ = settler.receive(startup, at: at(0))
        _ = settler.receive(steps[0], at: at(10))
        _ = settler.receive(steps[1], at: at(20))
        let net = settler.tick(at: at(1020))
        #expect(names(net) == ["interface:2 changed"])
        #expect(net.first?.changes == ["mtu"])
        #expect(net.first?.interfaceState?.mtu == 9000)
    }

    @Test func aRealChangeIsEmittedAsItsNetTransition() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down, up, down])
        var settler = Settler(window: .seconds(1))
        _ = settler.receive(startup, at: at(0))
        for (i, step) in steps.enumerated() { _ = settler.receive(step, at: at(10 * (i + 1))) }
        let net = settler.tick(at: at(2000))
        #expect(names(net) == ["interface:2 carrier-down", "interface:2 down", "policy:default unsatisfied"])
        // The same events an unsettled agent would have sent for up -> down.
        #expect(net == transitions([up, down]).steps[0])
    }

    @Test func satisfiedUnsatisfiedSatisfiedCollapses() {
        let wired = SystemState(interfaces: [Sample.eth0()])
        let none = SystemState(interfaces: [])
        let (startup, steps) = transitions([wired, none, wired])
        let pathEvents = steps.map { $0.filter { $0.scope == .path } }
        #expect(pathEvents.map(names) == [["policy:default unsatisfied"], ["policy:default satisfied"]])
        var settler = Settler(window: .milliseconds(500))
        _ = settler.receive(startup, at: at(0))
        _ = settler.receive(pathEvents[0], at: at(100))
        _ = settler.receive(pathEvents[1], at: at(200))
        #expect(settler.tick(at: at(700)).isEmpty)
    }

    @Test func satisfiedAgainOnAnotherPrimaryIsOneChanged() {
        let wired = SystemState(interfaces: [Sample.eth0()])
        let none = SystemState(interfaces: [])
        let wifi = SystemState(interfaces: [Sample.wlan0()])
        let (startup, steps) = transitions([wired, none, wifi])
        let pathEvents = steps.map { $0.filter { $0.scope == .path } }
        var settler = Settler(window: .milliseconds(500))
        _ = settler.receive(startup.filter { $0.scope == .path }, at: at(0))
        _ = settler.receive(pathEvents[0], at: at(100))
        _ = settler.receive(pathEvents[1], at: at(200))
        let net = settler.tick(at: at(700))
        #expect(names(net) == ["policy:default changed"])
        #expect(net.first?.interface == "wlan0")
        #expect(net.first?.previousInterface == "eth0")
    }

    @Test func carrierDownThenUpIsNothing() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down, up])
        var settler = Settler(window: .seconds(1))
        _ = settler.receive(startup, at: at(0))
        let carrier = steps.map { $0.filter { $0.name == .carrierDown || $0.name == .carrierUp } }
        #expect(carrier.map(names) == [["interface:2 carrier-down"], ["interface:2 carrier-up"]])
        _ = settler.receive(carrier[0], at: at(1))
        _ = settler.receive(carrier[1], at: at(2))
        #expect(settler.tick(at: at(5000)).isEmpty)
    }

    @Test func anAddressAddedThenRemovedIsNothing() {
        var twoAddresses = Sample.wlan0()
        twoAddresses.addresses.append("198.51.100.8/24")
        let one = SystemState(interfaces: [Sample.wlan0()])
        let two = SystemState(interfaces: [twoAddresses])
        let (startup, steps) = transitions([one, two, one])
        #expect(steps.map(names) == [["interface:3 address-added"], ["interface:3 address-removed"]])
        var settler = Settler(window: .seconds(1))
        _ = settler.receive(startup, at: at(0))
        _ = settler.receive(steps[0], at: at(10))
        _ = settler.receive(steps[1], at: at(20))
        #expect(settler.tick(at: at(1020)).isEmpty)
    }

    @Test func anInterfaceAddedAndRemovedWithinTheWindowIsNothing() {
        let (_, steps) = transitions([
            SystemState(interfaces: []), SystemState(interfaces: [Sample.wwan0()]), SystemState(interfaces: []),
        ])
        var settler = Settler(window: .seconds(1))
        let interfaceEvents = steps.map { $0.filter { $0.scope == .interface } }
        _ = settler.receive(interfaceEvents[0], at: at(0))
        _ = settler.receive(interfaceEvents[1], at: at(10))
        #expect(settler.tick(at: at(1010)).isEmpty)
    }

    @Test func eachSubjectSettlesOnItsOwnClock() {
        let base = SystemState(interfaces: [Sample.eth0(), Sample.wlan0()])
        let wiredDown = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false), Sample.wlan0()])
        let (startup, steps) = transitions([base, wiredDown])
        var settler = Settler(window: .seconds(1))
        _ = settler.receive(startup, at: at(0))
        let wired = steps[0].filter { $0.scope == .interface }
        let path = steps[0].filter { $0.scope == .path }
        _ = settler.receive(wired, at: at(0))
        _ = settler.receive(path, at: at(600))
        #expect(names(settler.tick(at: at(1000))) == ["interface:2 carrier-down", "interface:2 down"])
        #expect(settler.nextDeadline == at(1600))
        #expect(names(settler.tick(at: at(1600))) == ["policy:default changed"])
    }

    @Test func aSubjectThatNeverGoesQuietIsFlushedAfterTheMaximumHold() {
        // The MTU changes every 200 ms, faster than the 300 ms window.
        let states = (0...15).map {
            SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, mtu: 1500 + UInt32($0))])
        }
        let (startup, steps) = transitions(states)
        var settler = Settler(window: .milliseconds(300), maximumHold: .seconds(2))
        _ = settler.receive(startup, at: at(0))
        var emitted: [[Event]] = []
        for (i, step) in steps.enumerated() {
            emitted.append(settler.receive(step, at: at(100 + 200 * i)))
        }
        // Held since 100 ms, so flushed by the receive at 2100 ms with the state of 1900 ms.
        #expect(emitted.firstIndex { !$0.isEmpty } == 10)
        #expect(names(emitted[10]) == ["interface:2 changed"])
        #expect(emitted[10].first?.interfaceState?.mtu == 1510)
        let rest = settler.flush()
        #expect(names(rest) == ["interface:2 changed"])
        #expect(rest.first?.interfaceState?.mtu == 1515)
    }

    @Test func flushEmitsEveryHeldFinalStateAtOnceAndHoldsNothingAfter() {
        // What a stop does within the window: a link went down 100 ms ago, the agent is told to stop.
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down])
        var settler = Settler(window: .seconds(5))
        _ = settler.receive(startup, at: at(0))
        #expect(settler.receive(steps[0], at: at(100)).isEmpty)
        let flushed = settler.flush()
        // The same net change the window's end would have emitted, oldest subject first.
        #expect(names(flushed) == ["interface:2 carrier-down", "interface:2 down", "policy:default unsatisfied"])
        #expect(flushed == steps[0])
        #expect(settler.isIdle)
        #expect(settler.nextDeadline == nil)
        #expect(settler.tick(at: at(5100)).isEmpty)
        #expect(settler.flush().isEmpty)
    }

    @Test func withoutAKnownPreviousStateABurstIsEmittedUnchanged() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (_, steps) = transitions([up, down, up])
        var settler = Settler(window: .seconds(1))
        let all = steps.flatMap { $0 }
        #expect(settler.receive(all, at: at(0)).isEmpty)
        #expect(settler.flush() == all.filter { $0.scope == .interface } + all.filter { $0.scope == .path })
    }

    @Test func rememberedStartupStateIsABaselineWithoutBeingEmitted() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (startup, steps) = transitions([up, down, up])
        var settler = Settler(window: .seconds(1))
        settler.remember(startup)
        _ = settler.receive(steps.flatMap { $0 }, at: at(0))
        #expect(settler.tick(at: at(1000)).isEmpty)
    }

    @Test func aBurstHoldsAtMostItsLimitAndStillEmitsTheNetChange() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let mtu = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, mtu: 9000)])
        let (startup, steps) = transitions(
            [up] + Array(repeating: [down, up], count: 500).flatMap { $0 } + [down, mtu]
        )
        var settler = Settler(window: .seconds(2), maximumHold: .seconds(3600))
        _ = settler.receive(startup, at: at(0))
        for (i, step) in steps.enumerated() { #expect(settler.receive(step, at: at(1 + i)).isEmpty) }
        // Two subjects held (the interface, the policy): each within the limit.
        #expect(settler.heldEvents <= 2 * Settler.maximumHeldEvents, "\(settler.heldEvents) events held")
        let flushed = settler.flush()
        #expect(names(flushed) == ["interface:2 changed"], "1,000 flaps then an MTU change: one net change")
        #expect(flushed.first?.changes == ["mtu"])
    }

    @Test func anUnknownBaselineBurstPastItsLimitKeepsEachPiecesLastEvent() {
        let up = SystemState(interfaces: [Sample.eth0()])
        let down = SystemState(interfaces: [Sample.uplink(2, "eth0", .wired, carrier: false)])
        let (_, steps) = transitions([up] + Array(repeating: [down, up], count: 100).flatMap { $0 } + [down])
        var settler = Settler(window: .seconds(1))
        let interface = steps.flatMap { $0 }.filter { $0.scope == .interface }
        _ = settler.receive(interface, at: at(0))
        let flushed = settler.flush()
        #expect(flushed.count <= Settler.maximumHeldEvents)
        // Emitted unchanged (no baseline), so the last of each piece is the final state.
        #expect(flushed.last { $0.name == .carrierUp || $0.name == .carrierDown }?.name == .carrierDown)
        #expect(flushed.last { $0.name == .up || $0.name == .down }?.name == .down)
    }
}
