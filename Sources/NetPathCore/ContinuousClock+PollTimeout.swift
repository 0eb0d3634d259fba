// SPDX-License-Identifier: Apache-2.0

extension ContinuousClock.Instant {
    /// `poll(2)`'s timeout for a wait until this instant: milliseconds, rounded up.
    ///
    /// Rounded up so that `poll` never wakes just short of the deadline and spins; 0 when the
    /// instant has passed (one look at what is ready), `Int32.max` at most.
    ///
    /// - Parameter now: The time to count from.
    package func pollTimeout(from now: ContinuousClock.Instant = .now) -> Int32 {
        let left = now.duration(to: self)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return .max }
        return Int32(clamping: milliseconds.partialValue + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
