// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// The one deadline race: plugins' calls and the agent's bounded waits both use it.
struct TimedCallTests {
    @Test("an operation that ends in time is reported as finished")
    func finishesInTime() async {
        #expect(await TimedCall.finishes(within: .seconds(10)) {})
    }

    // The time limit is the assertion that the caller is let go: the operation would hold it
    // for an hour. (How soon after the deadline depends on the cooperative pool, shared with the
    // other tests: not asserted.)
    @Test(
        "an operation that ignores cancellation does not hold the caller past the deadline",
        .timeLimit(.minutes(1))
    )
    func hungOperation() async {
        // Never returns, and ignores cancellation: it waits on a detached task.
        let finished = await TimedCall.finishes(within: .milliseconds(100)) {
            await Task.detached { try? await Task.sleep(for: .seconds(3600)) }.value
        }
        #expect(!finished)
    }

    @Test("a late return is reported to late, once")
    func lateReturn() async throws {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let outcome = await TimedCall.run(
            timeout: .milliseconds(50),
            operation: { try? await Task.sleep(for: .milliseconds(300)) },
            late: { outcome in
                if case .returned = outcome { continuation.yield("returned late") }
                continuation.finish()
            }
        )
        guard case .timedOut = outcome else { Issue.record("expected a timeout, got \(outcome)"); return }
        var late: [String] = []
        for await line in stream { late.append(line) }
        #expect(late == ["returned late"])
    }
}
