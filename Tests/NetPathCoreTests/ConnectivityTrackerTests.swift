// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// Hysteresis and quality limits, fed results by hand: no clock, no prober.
struct ConnectivityTrackerTests {
    static func result(_ c: Connectivity, rtt: Duration? = .milliseconds(20), loss: Double? = 0, portal: String? = nil)
        -> ProbeResult
    {
        ProbeResult(
            interface: "eth0",
            connectivity: c,
            portalURL: portal,
            roundTrip: rtt,
            loss: loss,
            evidence: "probe said \(c)"
        )
    }

    @Test("the first result decides at once, whatever up and down say")
    func firstResultDecides() {
        var tracker = ConnectivityTracker(up: 3, down: 3)
        do {
            let changed = tracker.record(Self.result(.portal, portal: "http://portal.test/login"))
            #expect(changed)
        }
        #expect(tracker.connectivity == .portal)
        #expect(tracker.portalURL == "http://portal.test/login")
    }

    @Test("down = 3: two failed probes change nothing, the third does")
    func downThree() {
        var tracker = ConnectivityTracker(up: 1, down: 3)
        tracker.record(Self.result(.full))
        do {
            let changed = tracker.record(Self.result(.none))
            #expect(!changed)
        }
        #expect(tracker.connectivity == .full)
        #expect(tracker.evidence?.contains("1 of 3") == true)
        do {
            let changed = tracker.record(Self.result(.limited))
            #expect(!changed)
        }
        #expect(tracker.connectivity == .full)
        do {
            let changed = tracker.record(Self.result(.none))
            #expect(changed)
        }
        #expect(tracker.connectivity == .none)
        #expect(tracker.evidence == "probe said none")
    }

    @Test("up = 3: two good probes change nothing, the third does")
    func upThree() {
        var tracker = ConnectivityTracker(up: 3, down: 1)
        tracker.record(Self.result(.none))
        do {
            let changed = tracker.record(Self.result(.full))
            #expect(!changed)
        }
        do {
            let changed = tracker.record(Self.result(.full))
            #expect(!changed)
        }
        #expect(tracker.connectivity == .none)
        do {
            let changed = tracker.record(Self.result(.full))
            #expect(changed)
        }
        #expect(tracker.connectivity == .full)
    }

    @Test("a result equal to the state, or in the other direction, starts the count again")
    func streakResets() {
        var tracker = ConnectivityTracker(up: 1, down: 2)
        tracker.record(Self.result(.full))
        tracker.record(Self.result(.none))
        tracker.record(Self.result(.full))
        #expect(tracker.streak == 0)
        do {
            let changed = tracker.record(Self.result(.none))
            #expect(!changed)
        }
        #expect(tracker.connectivity == .full)
        do {
            let changed = tracker.record(Self.result(.none))
            #expect(changed)
        }
    }

    @Test("a full answer over max_rtt or max_loss counts as a failed check, with the reason in the evidence")
    func qualityLimits() {
        var slow = ConnectivityTracker(maxRoundTrip: .milliseconds(100))
        slow.record(Self.result(.full, rtt: .milliseconds(250)))
        #expect(slow.connectivity == .limited)
        #expect(slow.evidence?.contains("over max_rtt 100 ms") == true)
        #expect(slow.roundTrip == .milliseconds(250))

        var lossy = ConnectivityTracker(maxLoss: 0.2)
        lossy.record(Self.result(.full, loss: 0.5))
        #expect(lossy.connectivity == .limited)
        #expect(lossy.evidence?.contains("over max_loss 20%") == true)
        lossy.record(Self.result(.full, loss: 0.1))
        #expect(lossy.connectivity == .full)
    }

    @Test("the portal URL goes when the portal does")
    func portalURLClears() {
        var tracker = ConnectivityTracker()
        tracker.record(Self.result(.portal, portal: "http://portal.test/"))
        tracker.record(Self.result(.full))
        #expect(tracker.portalURL == nil)
    }

    @Test("require_connectivity: unknown is not held to it; a verdict below it fails")
    func satisfies() {
        #expect(Connectivity.unknown.satisfies(.full))
        #expect(Connectivity.full.satisfies(.full))
        #expect(!Connectivity.portal.satisfies(.full))
        #expect(Connectivity.portal.satisfies(.portal))
        #expect(!Connectivity.limited.satisfies(.portal))
        #expect(!Connectivity.none.satisfies(.portal))
    }

    @Test("a portal URL and evidence from the network are kept single-line and bounded")
    func hostileTextIsBounded() {
        var tracker = ConnectivityTracker()
        let url = "http://portal.test/\nSet-Cookie: x" + String(repeating: "a", count: 10_000)
        tracker.record(
            ProbeResult(interface: "eth0", connectivity: .portal, portalURL: url, evidence: "HTTP 302\r\nto \(url)")
        )
        let kept = tracker.portalURL ?? ""
        #expect(!kept.contains("\n") && kept.hasPrefix("http://portal.test/\\n"))
        #expect(kept.count == ConnectivityTracker.maximumTextLength + 1)
        #expect(!(tracker.evidence ?? "").contains { $0.isNewline })
    }
}
