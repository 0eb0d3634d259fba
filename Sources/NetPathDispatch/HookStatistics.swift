// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Counters the dispatcher keeps, as plain values for metrics and `netpathctl`.
package struct HookStatistics: Hashable, Sendable {
    /// A metrics series: one hook and one outcome.
    package struct RunKey: Hashable, Sendable {
        package var hook: String
        package var outcome: HookResult.Outcome

        package init(hook: String, outcome: HookResult.Outcome) {
            self.hook = hook
            self.outcome = outcome
        }
    }

    /// Run durations of one hook.
    package struct Durations: Hashable, Sendable {
        package var count = 0
        package var total = Duration.zero
        package var maximum = Duration.zero
    }

    /// Runs by hook and outcome.
    package var runs: [RunKey: Int] = [:]
    /// Durations by hook.
    package var durations: [String: Durations] = [:]
    /// The last result of each hook.
    package var lastResults: [String: HookResult] = [:]
    /// Events accepted by ``HookDispatcher/dispatch(_:to:)``.
    package var eventsReceived = 0
    /// Queued events dropped as obsolete, by event name.
    package var eventsDropped: [Event.Name: Int] = [:]
    /// Runs skipped because the hook was refused when it was about to run, by refusal code.
    package var refusals: [String: Int] = [:]
    /// Output bytes read from hooks but not logged.
    package var outputBytesDropped = 0

    package init() {}

    /// All runs of `hook` (with `outcome`, when given).
    package func runCount(_ hook: String, _ outcome: HookResult.Outcome? = nil) -> Int {
        runs.filter { $0.key.hook == hook && (outcome == nil || $0.key.outcome == outcome) }.values.reduce(0, +)
    }

    mutating func record(_ result: HookResult) {
        runs[RunKey(hook: result.hook, outcome: result.outcome), default: 0] += 1
        var durations = self.durations[result.hook] ?? Durations()
        durations.count += 1
        durations.total += result.duration
        durations.maximum = max(durations.maximum, result.duration)
        self.durations[result.hook] = durations
        lastResults[result.hook] = result
        outputBytesDropped += result.bytesDropped
    }
}
