// SPDX-License-Identifier: Apache-2.0

/// A path together with the reasoning behind it: what `netpathctl explain` prints.
package struct PathEvaluation: Hashable, Sendable {
    /// Why an interface cannot carry the path at all.
    package enum Rejection: String, Hashable, Sendable, Codable {
        case loopback
        case wrongType = "wrong-type"
        case prohibited
        case meteredDenied = "metered-denied"
        case adminDown = "admin-down"
        case noCarrier = "no-carrier"
        case noAddress = "no-address"
        case noDefaultRoute = "no-default-route"
        case noRouteToTarget = "no-route-to-target"
        /// The policy's target is a host name with no address yet: being looked up, or the lookup failed.
        case targetUnresolved = "target-unresolved"
        /// Its connectivity (probed) is below the policy's `require_connectivity`, or its probe failed.
        case connectivity = "no-connectivity"
    }

    /// Why a candidate ranked below the one before it.
    package enum Ranking: String, Hashable, Sendable, Codable {
        /// It is metered and the policy avoids metered interfaces.
        case meteredAvoided = "metered-avoided"
        /// Its type comes later in the policy's `prefer` list.
        case lowerPreference = "lower-preference"
        /// The kernel sends traffic to the internet elsewhere (`ip route get`, rules applied).
        case notKernelRoute = "not-kernel-route"
        /// Its best route has a higher metric.
        case higherMetric = "higher-metric"
        /// Everything else was equal; the lower interface index won.
        case tieBreak = "tie-break"
    }

    /// The verdict on one interface.
    package enum Outcome: Hashable, Sendable {
        /// The path's primary interface.
        case primary
        /// A usable candidate at `rank` (1 is just behind the primary), and why it lost to the one ahead.
        case candidate(rank: Int, lostBecause: Ranking)
        /// Not a candidate.
        case rejected(Rejection)
    }

    /// One interface and the verdict on it.
    package struct Verdict: Hashable, Sendable {
        package var interface: NetworkPath.PathInterface
        package var outcome: Outcome
        /// Supporting detail for people: metrics, types, what is missing.
        package var detail: String

        package init(interface: NetworkPath.PathInterface, outcome: Outcome, detail: String) {
            self.interface = interface
            self.outcome = outcome
            self.detail = detail
        }
    }

    /// The path.
    package var path: NetworkPath
    /// A verdict for every interface in the state, primary first, then candidates, then rejections.
    package var verdicts: [Verdict]

    package init(path: NetworkPath, verdicts: [Verdict]) {
        self.path = path
        self.verdicts = verdicts
    }
}
