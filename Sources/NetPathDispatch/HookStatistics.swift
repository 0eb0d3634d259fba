import NetPathCore

/// Counters the dispatcher keeps, as plain values for metrics and `netpathctl`.
public struct HookStatistics: Hashable, Sendable {
    /// A metrics series: one hook and one outcome.
    public struct RunKey: Hashable, Sendable {
        public var hook: String
        public var outcome: HookResult.Outcome

        public init(hook: String, outcome: HookResult.Outcome) {
            self.hook = hook
            self.outcome = outcome
        }
    }

    /// Run durations of one hook.
    public struct Durations: Hashable, Sendable {
        public var count = 0
        public var total = Duration.zero
        public var maximum = Duration.zero
    }

    /// Runs by hook and outcome.
    public var runs: [RunKey: Int] = [:]
    /// Durations by hook.
    public var durations: [String: Durations] = [:]
    /// The last result of each hook.
    public var lastResults: [String: HookResult] = [:]
    /// Events accepted by ``HookDispatcher/dispatch(_:to:)``.
    public var eventsReceived = 0
    /// Queued events dropped as obsolete, by event name.
    public var eventsDropped: [Event.Name: Int] = [:]
    /// Runs skipped because the hook was refused when it was about to run, by refusal code.
    public var refusals: [String: Int] = [:]
    /// Output bytes read from hooks but not logged.
    public var outputBytesDropped = 0

    public init() {}

    /// All runs of `hook` (with `outcome`, when given).
    public func runCount(_ hook: String, _ outcome: HookResult.Outcome? = nil) -> Int {
        runs.filter { $0.key.hook == hook && (outcome == nil || $0.key.outcome == outcome) }.values.reduce(0, +)
    }

    /// All events dropped as obsolete.
    public var totalDropped: Int { eventsDropped.values.reduce(0, +) }

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
