// SPDX-License-Identifier: Apache-2.0

/// One interface's connectivity after hysteresis: feed it each ``ProbeResult``, read
/// ``connectivity``.
///
/// A pure value, no clock. The rules (docs/connectivity.md):
/// - The first result decides at once: `unknown` is no verdict to hold on to.
/// - A `full` answer slower than `max_rtt`, or lossier than `max_loss`, counts as a failed
///   check: `limited`, with the reason added to the evidence.
/// - Otherwise the state changes only after `up` consecutive results better than it (towards
///   `full`), or `down` consecutive results worse than it; the state it changes to is the last
///   result's. A result equal to the state, or one in the other direction, starts the count again.
/// - The portal URL, round-trip time, loss and evidence are always the last result's, so
///   `explain` shows what the last probe saw even while hysteresis holds the state.
///
/// ```swift
/// var tracker = ConnectivityTracker(up: 1, down: 3)
/// tracker.record(result)   // true when ``connectivity`` changed
/// ```
package struct ConnectivityTracker: Hashable, Sendable {
    /// Consecutive better results needed to raise the state.
    package var up: Int
    /// Consecutive worse results needed to lower the state.
    package var down: Int
    /// A slower `full` answer is a failed check.
    package var maxRoundTrip: Duration?
    /// A lossier `full` answer is a failed check.
    package var maxLoss: Double?

    /// The state after hysteresis.
    package private(set) var connectivity: Connectivity = .unknown
    /// The portal's URL while ``connectivity`` is ``Connectivity/portal``.
    package private(set) var portalURL: String?
    /// The last result's round-trip time.
    package private(set) var roundTrip: Duration?
    /// The last result's loss.
    package private(set) var loss: Double?
    /// The last result's evidence, with hysteresis or quality notes; `nil` before any result.
    package private(set) var evidence: String?
    /// How many results in a row point away from ``connectivity`` in the same direction.
    package private(set) var streak = 0
    private var streakUp = false

    /// A tracker with nothing recorded.
    package init(up: Int = 1, down: Int = 1, maxRoundTrip: Duration? = nil, maxLoss: Double? = nil) {
        self.up = max(1, up)
        self.down = max(1, down)
        self.maxRoundTrip = maxRoundTrip
        self.maxLoss = maxLoss
    }

    /// A tracker with `settings`' thresholds.
    package init(_ settings: ConnectivitySettings) {
        self.init(up: settings.up, down: settings.down, maxRoundTrip: settings.maxRoundTrip, maxLoss: settings.maxLoss)
    }

    /// What `result` counts as: its own verdict, or `limited` for a `full` answer outside
    /// `max_rtt` / `max_loss`; with the evidence to show for it.
    package func verdict(of result: ProbeResult) -> (Connectivity, String) {
        guard result.connectivity == .full else { return (result.connectivity, result.evidence) }
        if let limit = maxRoundTrip, let rtt = result.roundTrip, rtt > limit {
            return (
                .limited,
                "\(result.evidence); round trip \(Self.format(rtt)) is over max_rtt \(Self.format(limit))"
            )
        }
        if let limit = maxLoss, let loss = result.loss, loss > limit {
            return (.limited, "\(result.evidence); loss \(Self.percent(loss)) is over max_loss \(Self.percent(limit))")
        }
        return (.full, result.evidence)
    }

    /// The longest portal URL or evidence kept; the rest is cut, marked with "…".
    package static let maximumTextLength = 2048

    /// Takes one result; returns whether ``connectivity`` changed.
    ///
    /// The portal URL and the evidence come from whatever answered on the network: they are kept
    /// single-line (control characters escaped) and at most ``maximumTextLength`` characters,
    /// since they reach hook variables, events and logs.
    @discardableResult
    package mutating func record(_ untrusted: ProbeResult) -> Bool {
        var result = untrusted
        result.portalURL = result.portalURL.map(Self.bounded)
        result.evidence = Self.bounded(result.evidence)
        let (verdict, why) = verdict(of: result)
        roundTrip = result.roundTrip
        loss = result.loss
        let old = connectivity
        if connectivity == .unknown || verdict == connectivity {
            streak = 0
            connectivity = verdict
            evidence = why
        } else {
            let better = Self.rank(verdict) > Self.rank(connectivity)
            streak = (streak > 0 && streakUp == better) ? streak + 1 : 1
            streakUp = better
            let needed = better ? up : down
            if streak >= needed {
                streak = 0
                connectivity = verdict
                evidence = why
            } else {
                evidence =
                    "\(why) (\(streak) of \(needed) in a row to change from \(connectivity); \(better ? "up" : "down") = \(needed))"
            }
        }
        if connectivity == .portal {
            // The last portal answer's URL; a held portal state keeps the URL it was seen with.
            if verdict == .portal, let url = result.portalURL { portalURL = url }
        } else {
            portalURL = nil
        }
        return connectivity != old
    }

    /// Back to nothing recorded: the interface stopped being probed.
    package mutating func reset() {
        self = ConnectivityTracker(up: up, down: down, maxRoundTrip: maxRoundTrip, maxLoss: maxLoss)
    }

    /// `interface` with this tracker's state.
    package func applied(to interface: Interface) -> Interface {
        var copy = interface
        copy.connectivity = connectivity
        copy.portalURL = portalURL
        copy.roundTrip = roundTrip
        copy.loss = loss
        copy.connectivityEvidence = evidence
        return copy
    }

    /// The order hysteresis counts in: `unknown` (the helper failed) below every verdict.
    static func rank(_ c: Connectivity) -> Int {
        switch c {
        case .unknown: return 0
        case .none: return 1
        case .limited: return 2
        case .portal: return 3
        case .full: return 4
        default: return 0  // a state this version does not know counts as no verdict
        }
    }

    static func format(_ d: Duration) -> String {
        let ms = d.milliseconds
        return ms >= 1000 && ms.truncatingRemainder(dividingBy: 1000) == 0
            ? "\(Int(ms / 1000)) s" : "\(Int(ms.rounded())) ms"
    }

    static func bounded(_ text: String) -> String {
        let escaped = text.escapingControlCharacters
        return escaped.count <= maximumTextLength ? escaped : String(escaped.prefix(maximumTextLength)) + "…"
    }

    static func percent(_ x: Double) -> String { "\(Int((x * 100).rounded()))%" }
}

extension Connectivity {
    /// Whether this state meets a policy's `require_connectivity = required`: `full` meets
    /// everything, `portal` meets `portal`. `unknown` meets every requirement here, as the state
    /// alone cannot tell "not probed yet" from "the probe failed": the path evaluator also looks
    /// at the interface's evidence, and holds a failed probe against it (docs/connectivity.md).
    package func satisfies(_ required: Connectivity) -> Bool {
        self == .unknown || ConnectivityTracker.rank(self) >= ConnectivityTracker.rank(required)
    }
}

extension Interface {
    /// Whether a probe of this interface ended without a verdict: its connectivity is `unknown`
    /// although it has evidence, which only a probe's result gives (the probe helper failed, or
    /// could not bind its socket).
    package var connectivityProbeFailed: Bool { connectivity == .unknown && connectivityEvidence != nil }

    /// Whether this interface meets a policy's `require_connectivity = required`.
    ///
    /// An interface not probed yet, or not probed at all (probing off, not a covered interface),
    /// meets it: there is nothing to hold against it. Once a probe has ended, only a verdict
    /// that meets it does: `unknown` then means the probe failed, and a failure is not held to be
    /// the internet, so that nothing a server sends (not even an answer that crashes or stalls
    /// the probe helper) keeps a policy that requires `full` on the interface.
    package func meetsConnectivity(_ required: Connectivity) -> Bool {
        !connectivityProbeFailed && connectivity.satisfies(required)
    }
}
