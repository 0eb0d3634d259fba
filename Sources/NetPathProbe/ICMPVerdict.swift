// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// The rule that turns echo replies into a verdict (docs/probe-helper.md), as mwan3's
/// `track_ip` with `reliability`.
package enum ICMPVerdict {
    /// What one host did.
    package struct Host: Sendable {
        /// The host as configured.
        package var name: String
        /// False when the name did not resolve.
        package var resolved: Bool
        /// Echo requests sent.
        package var sent: Int
        /// Round-trip times of the replies.
        package var replies: [Duration]

        package init(name: String, resolved: Bool, sent: Int, replies: [Duration]) {
            self.name = name
            self.resolved = resolved
            self.sent = sent
            self.replies = replies
        }
    }

    /// A host answers when at least one of its echo requests got a reply.
    ///
    /// - `reliability` or more hosts answered → `full`;
    /// - no host answered and every name resolved → `none`;
    /// - otherwise (some answered but too few, or a name did not resolve) → `limited`.
    ///
    /// Loss counts the echo requests of every host (one that did not resolve loses all
    /// `count`); the round trip is the mean over all replies.
    package static func classify(_ hosts: [Host], count: Int, reliability: Int) -> (
        Connectivity, roundTrip: Duration?, loss: Double, evidence: String
    ) {
        let answered = hosts.filter { !$0.replies.isEmpty }.count
        let replies = hosts.flatMap(\.replies)
        let planned = max(1, hosts.count * count)
        let loss = Double(planned - min(planned, replies.count)) / Double(planned)
        let roundTrip = replies.isEmpty ? nil : replies.reduce(Duration.zero, +) / replies.count
        let unresolved = hosts.filter { !$0.resolved }.map(\.name)
        var evidence = "\(answered) of \(hosts.count) hosts answered (\(reliability) needed)"
        if !unresolved.isEmpty { evidence += "; not resolved: \(unresolved.joined(separator: ", "))" }
        let state: Connectivity
        if answered >= reliability {
            state = .full
        } else if answered == 0 && unresolved.isEmpty {
            state = .none
        } else {
            state = .limited
        }
        return (state, roundTrip, loss, evidence.escapingControlCharacters)
    }
}
