// SPDX-License-Identifier: Apache-2.0

import Glibc

/// `CLOCK_MONOTONIC` read directly, in nanoseconds: the clock of
/// ``ConditionLock/wait(until:for:)``'s deadlines and of systemd's `MONOTONIC_USEC`. Not
/// `ContinuousClock`, which on Linux reads `CLOCK_BOOTTIME` (it counts time suspended); and these
/// callers need the clock's own nanoseconds, which no `InstantProtocol` value hands out.
package enum MonotonicClock {
    /// Nanoseconds of `CLOCK_MONOTONIC`: from an unspecified origin (about the boot, shifted in a
    /// time namespace), not counting time suspended.
    package static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
