// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathProbe

/// The rule from echo replies to a verdict: reliability, loss, round trip.
struct ICMPVerdictTests {
    static func host(_ name: String, replies: Int, of sent: Int = 3, resolved: Bool = true) -> ICMPVerdict.Host {
        .init(
            name: name,
            resolved: resolved,
            sent: resolved ? sent : 0,
            replies: Array(repeating: .milliseconds(10), count: replies)
        )
    }

    @Test("reliability hosts answering is full; none answering is none; too few or unresolved is limited")
    func verdicts() {
        #expect(
            ICMPVerdict.classify([Self.host("a", replies: 1), Self.host("b", replies: 0)], count: 3, reliability: 1).0
                == .full
        )
        #expect(
            ICMPVerdict.classify([Self.host("a", replies: 1), Self.host("b", replies: 0)], count: 3, reliability: 2).0
                == .limited
        )
        #expect(
            ICMPVerdict.classify([Self.host("a", replies: 0), Self.host("b", replies: 0)], count: 3, reliability: 1).0
                == .none
        )
        #expect(
            ICMPVerdict.classify(
                [Self.host("a", replies: 0), Self.host("b", replies: 0, resolved: false)],
                count: 3,
                reliability: 1
            ).0 == .limited
        )
    }

    @Test("loss counts every planned echo request; the round trip is the mean of the replies")
    func quality() {
        let (_, roundTrip, loss, evidence) = ICMPVerdict.classify(
            [
                .init(name: "a", resolved: true, sent: 2, replies: [.milliseconds(10), .milliseconds(30)]),
                Self.host("b", replies: 0, of: 2),
            ],
            count: 2,
            reliability: 1
        )
        #expect(loss == 0.5)
        #expect(roundTrip == .milliseconds(20))
        #expect(evidence == "1 of 2 hosts answered (1 needed)")
    }
}
