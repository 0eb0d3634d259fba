// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathControl
import NetPathCore
import Synchronization
import Testing

@testable import NetPathAgent

/// The agent's probing bookkeeping across reloads, without an agent: results of the old settings
/// are not counted, and interfaces the new settings leave out are forgotten at once.
@Suite struct ConnectivityMonitorTests {
    /// A prober that answers every probe at once; the tests hand results to the monitor themselves.
    struct ImmediateProber: ConnectivityProbing {
        func probe(_ request: ProbeRequest) async -> ProbeResult {
            ProbeResult(interface: request.interface, connectivity: .full, evidence: "test")
        }
    }

    static let eth0 = Interface(
        index: 3,
        name: "eth0",
        type: .wired,
        addresses: [InterfaceAddress(cidr: "192.0.2.10/24")!],
        defaultRoutes: [DefaultRoute(via: IPAddress("192.0.2.1"))]
    )

    static func full(_ interface: Interface) -> ProbeResult {
        ProbeResult(interface: interface.name, connectivity: .full, evidence: "HTTP 204")
    }

    static func monitor() -> ConnectivityMonitor {
        ConnectivityMonitor(inbox: LoopInbox(), logger: Logger(label: "test")) { ImmediateProber() }
    }

    @Test("a result of a probe started before a reload changed [connectivity] is not counted; the next probe's is")
    func retiredResultsAreNotCounted() throws {
        let monitor = Self.monitor()
        let now = ContinuousClock.now
        monitor.configure(ConnectivitySettings(interval: .seconds(300)))
        monitor.observe(SystemState(interfaces: [Self.eth0]), at: now)
        // Past the scheduler's debounce: the probe of the new interface starts.
        monitor.pump(at: now + .seconds(1))
        try #require(monitor.probesStarted == 1)

        // The reload changes the settings while probe 1 is in flight: its verdict belongs to the
        // old method and must not decide the new state.
        monitor.configure(ConnectivitySettings(interval: .seconds(60)))
        #expect(!monitor.received(3, sequence: 1, result: Self.full(Self.eth0), at: now))
        #expect(monitor.states.isEmpty, "the retired result was counted: \(monitor.states)")

        // The interface is probed again under the new settings, and that result counts.
        let later = now + .seconds(600)
        monitor.pump(at: later)
        try #require(monitor.probesStarted == 2)
        #expect(monitor.received(3, sequence: 2, result: Self.full(Self.eth0), at: later))
        #expect(monitor.states.map(\.tracker.connectivity) == [.full])
        monitor.stop()
    }

    @Test("an interface a reload no longer covers is forgotten: a `probe` waiting for it is answered at once")
    func uncoveredInterfacesAreForgotten() throws {
        let monitor = Self.monitor()
        let now = ContinuousClock.now
        monitor.configure(ConnectivitySettings(interfaces: [try Glob("eth*")]))
        monitor.observe(SystemState(interfaces: [Self.eth0]), at: now)
        let replies = Mutex<[ControlReply]>([])
        monitor.probeNow("eth0", reply: { reply in replies.withLock { $0.append(reply) } }, at: now)
        #expect(replies.withLock { $0 }.isEmpty, "answered before any probe ended")

        monitor.configure(ConnectivitySettings(interfaces: [try Glob("wlan*")]))
        let reply = try #require(replies.withLock { $0 }.first, "the waiting probe was left unanswered")
        #expect(reply.ok)
        let report = try #require(reply.probes?.first)
        #expect(report.interface == "eth0")
        #expect(report.connectivity == .unknown)
        #expect(report.evidence.contains("no longer probed"), "\(report.evidence)")
        #expect(monitor.states.isEmpty)
        monitor.stop()
    }
}
