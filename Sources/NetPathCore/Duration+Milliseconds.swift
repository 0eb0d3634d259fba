// SPDX-License-Identifier: Apache-2.0
// Round-trip times travel as milliseconds in JSON, hook variables and metrics.
extension Duration {
    /// The duration in milliseconds, with fractions (`12.5`).
    package var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// A duration of `milliseconds`; `nil` for a negative, non-finite or absurdly long value
    /// (over a day), which no measured round trip is.
    package init?(milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds <= 86_400_000 else { return nil }
        self = .nanoseconds(Int64((milliseconds * 1_000_000).rounded()))
    }
}
