// SPDX-License-Identifier: Apache-2.0

import Glibc

/// Tells a resume from suspend: `CLOCK_BOOTTIME` counts the time suspended and
/// `CLOCK_MONOTONIC` does not, so the distance between them grows by exactly the time the machine
/// slept (Tailscale's netmon watches the wall clock jump for the same reason).
///
/// Pure: it takes readings and says how long the machine slept since the last one.
///
/// ```swift
/// var detector = ResumeDetector()
/// _ = detector.observe(SystemBootClocks().read())
/// // … later:
/// if let slept = detector.observe(SystemBootClocks().read()) { print("resumed after \(slept)") }
/// ```
package struct ResumeDetector: Sendable {
    /// Growth of the distance below this is not a suspend (a short freeze of the whole VM, or
    /// clock adjustment noise).
    package var threshold: Duration
    /// `boottime - monotonic` at the last reading, in nanoseconds.
    private var offset: Int64?

    /// A detector that reports suspends of at least `threshold`.
    package init(threshold: Duration = .seconds(2)) {
        self.threshold = threshold
    }

    /// Takes a reading; returns how long the machine was suspended since the last one, when at
    /// least ``threshold``. The first reading only sets the start.
    package mutating func observe(_ reading: BootClocksReading) -> Duration? {
        let now = Int64(bitPattern: reading.boottime &- reading.monotonic)
        defer { offset = now }
        guard let offset else { return nil }
        let slept = Duration.nanoseconds(now &- offset)
        return slept >= threshold ? slept : nil
    }

    /// Reads `clocks` every `interval` until the task is cancelled and calls `resumed` with the
    /// length of each suspend. `interval` is measured on the continuous clock, which counts the
    /// suspend, so a reading due during one is taken at once on resume.
    package static func watch(
        _ clocks: any BootClocks,
        every interval: Duration,
        resumed: (Duration) -> Void
    ) async {
        var detector = ResumeDetector()
        _ = detector.observe(clocks.read())
        while !Task.isCancelled {
            try? await Task.sleep(for: interval, clock: .continuous)
            if let slept = detector.observe(clocks.read()) { resumed(slept) }
        }
    }
}

/// The two clocks ``ResumeDetector`` compares, behind a seam so that a test can simulate a resume.
package protocol BootClocks: Sendable {
    /// Reads both clocks, as close together as possible.
    func read() -> BootClocksReading
}

/// One reading of `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`, in nanoseconds.
package struct BootClocksReading: Sendable, Hashable {
    package var boottime: UInt64
    package var monotonic: UInt64

    package init(boottime: UInt64, monotonic: UInt64) {
        self.boottime = boottime
        self.monotonic = monotonic
    }
}

/// The kernel's clocks.
package struct SystemBootClocks: BootClocks {
    package init() {}

    package func read() -> BootClocksReading {
        var boot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        return BootClocksReading(
            boottime: UInt64(boot.tv_sec) * 1_000_000_000 + UInt64(boot.tv_nsec),
            monotonic: MonotonicClock.nanoseconds
        )
    }
}
