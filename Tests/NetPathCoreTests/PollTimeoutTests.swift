// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@Suite("ContinuousClock.Instant.pollTimeout")
struct PollTimeoutTests {
    @Test(
        "a deadline's poll timeout is its milliseconds rounded up, 0 once it has passed, Int32.max at most",
        arguments: [
            (Duration.zero, Int32(0)),
            (.milliseconds(-5), 0),
            (.nanoseconds(1), 1),
            (.microseconds(999), 1),
            (.milliseconds(1), 1),
            (.microseconds(1001), 2),
            (.milliseconds(250), 250),
            (.seconds(3_000_000), .max),
        ]
    )
    func roundsUp(left: Duration, expected: Int32) {
        let now = ContinuousClock.now
        #expect((now + left).pollTimeout(from: now) == expected)
    }
}
