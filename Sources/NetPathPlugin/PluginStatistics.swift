// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathQueues

/// Counters of one plugin, as plain values for metrics and `netpathctl`.
public struct PluginStatistics: Hashable, Sendable {
    /// How one event call ended.
    public enum Outcome: String, Hashable, Sendable, CaseIterable {
        /// Returned within its timeout.
        case success
        /// Threw within its timeout.
        case failure
        /// Had not returned when its timeout passed.
        case timeout
    }

    /// Event calls by outcome.
    public var calls: [Outcome: Int] = [:]
    /// Calls that returned (or threw) after their timeout had been counted.
    public var lateCompletions = 0
    /// Calls past their timeout that have not returned yet (a gauge): each blocks its subject.
    public var stuck = 0
    /// Events waiting (a gauge).
    public var queued = 0
    /// Queued events dropped because a newer event of their subject made them obsolete.
    public var droppedObsolete = 0
    /// Queued events dropped because their subject's queue was full (oldest first).
    public var droppedOverflow = 0
    /// Events not delivered because the runner was stopping.
    public var droppedStopping = 0
    /// Failed or timed-out lifecycle calls, by callback: `start`, `stop`, `reload`, `reopen`.
    public var lifecycleFailures: [String: Int] = [:]
    /// Calls that returned within their timeout, and how long they took.
    public var completedCalls = 0
    public var totalDuration = Duration.zero
    public var maximumDuration = Duration.zero
    /// The last error a call threw, as text.
    public var lastError: String?

    public init() {}

    /// Event calls with `outcome`.
    public func count(_ outcome: Outcome) -> Int { calls[outcome, default: 0] }

    mutating func record(_ outcome: Outcome, duration: Duration?) {
        calls[outcome, default: 0] += 1
        if let duration {
            completedCalls += 1
            totalDuration += duration
            maximumDuration = max(maximumDuration, duration)
        }
    }
}

extension PluginStatistics {
    /// Counts a queued event the plugin's queues dropped, by why.
    mutating func countDrop(_ drop: SubjectQueues<Event>.Drop) {
        if drop.supersededBy != nil {
            droppedObsolete += 1
        } else {
            droppedOverflow += 1
        }
    }
}
