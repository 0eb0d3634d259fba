// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Synchronization

/// The kernel's clocks, with `CLOCK_BOOTTIME` moved ahead by what ``suspend(for:)`` adds.
package final class JumpingClocks: BootClocks {
    package init() {}

    private let slept = Mutex<UInt64>(0)

    package func read() -> BootClocksReading {
        var reading = SystemBootClocks().read()
        reading.boottime += slept.withLock { $0 }
        return reading
    }

    package func suspend(for duration: Duration) {
        slept.withLock { $0 += UInt64(duration.components.seconds) * 1_000_000_000 }
    }
}
