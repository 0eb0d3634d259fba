// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathAgent

/// The connectivity series of `/metrics`.
struct ConnectivityMetricsTests {
    @Test("state (1 for the current one), round trip, loss and the probe count; a gone interface shows unknown")
    func series() {
        let metrics = AgentMetrics()
        var tracker = ConnectivityTracker()
        tracker.record(
            ProbeResult(
                interface: "eth0",
                connectivity: .portal,
                roundTrip: .milliseconds(250),
                loss: 0.5,
                evidence: "x"
            )
        )
        metrics.record(connectivity: [("eth0", tracker)], probes: 3)
        let text = metrics.text()
        #expect(text.contains(#"netpath_connectivity{interface="eth0",state="portal"} 1"#), "\(text)")
        #expect(text.contains(#"netpath_connectivity{interface="eth0",state="full"} 0"#))
        #expect(text.contains(#"netpath_connectivity_rtt_seconds{interface="eth0"} 0.25"#))
        #expect(text.contains(#"netpath_connectivity_loss_ratio{interface="eth0"} 0.5"#))
        #expect(text.contains("netpath_connectivity_probes_total 3"))

        metrics.record(connectivity: [], probes: 5)
        let after = metrics.text()
        #expect(after.contains(#"netpath_connectivity{interface="eth0",state="unknown"} 1"#), "\(after)")
        #expect(after.contains(#"netpath_connectivity{interface="eth0",state="portal"} 0"#))
        #expect(after.contains("netpath_connectivity_probes_total 5"))
    }
}
