import Glibc

/// `CLOCK_MONOTONIC` read directly, in nanoseconds since boot: the clock of
/// ``ConditionLock/wait(until:for:)``'s deadlines and of systemd's `MONOTONIC_USEC`, and a
/// timestamp that costs one vDSO call where a `ContinuousClock.Instant` is more than the caller
/// needs.
package enum MonotonicClock {
    /// Nanoseconds since boot, not counting time suspended.
    package static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
