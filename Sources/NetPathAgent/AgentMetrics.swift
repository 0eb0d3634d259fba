import NetPath
import NetPathDispatch
import NetPathLinux
import Prometheus
import Synchronization

/// The agent's Prometheus metrics, kept in a `PrometheusCollectorRegistry` and served as text by
/// ``MetricsServer``.
///
/// Counters kept elsewhere as plain values (the engine's overruns, the hook dispatcher's runs)
/// are carried over as deltas whenever they are read, so each series only ever increases.
final class AgentMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    private struct Seen {
        var hookRuns: [HookStatistics.RunKey: Int] = [:]
        var hookResults: [String: HookResult] = [:]
        var overruns: UInt64 = 0
        var resyncs: UInt64 = 0
        var primaries: [String: String] = [:]
        var pluginErrors: [String: Int] = [:]
    }
    private let seen = Mutex(Seen())

    /// Hook run durations, seconds; hooks usually take milliseconds, a hung one its timeout.
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
    ]

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// Counts one dispatched event.
    func record(_ event: Event) {
        registry.makeCounter(
            name: "netpath_events_total",
            labels: [("event", event.name.rawValue), ("scope", event.scope.rawValue)],
            help: "Events dispatched, by name and scope."
        ).increment()
    }

    /// Sets the per-policy path gauges.
    func record(paths: [NetworkPath]) {
        seen.withLock { seen in
            for path in paths {
                registry.makeGauge(
                    name: "netpath_path_satisfied",
                    labels: [("policy", path.policy)],
                    help: "1 when the policy's path is satisfied, else 0."
                ).set(Int64(path.status == .satisfied ? 1 : 0))
                let primary = path.primary?.name ?? ""
                if let old = seen.primaries[path.policy], old != primary {
                    registry.makeGauge(
                        name: "netpath_path_primary",
                        labels: [("policy", path.policy), ("interface", old)],
                        help: "1 for the policy's current primary interface."
                    ).set(Int64(0))
                }
                if !primary.isEmpty {
                    registry.makeGauge(
                        name: "netpath_path_primary",
                        labels: [("policy", path.policy), ("interface", primary)],
                        help: "1 for the policy's current primary interface."
                    ).set(Int64(1))
                }
                seen.primaries[path.policy] = primary
            }
        }
    }

    /// Carries over the engine's and the dispatcher's counters.
    func update(engine: EngineStatistics, hooks: HookStatistics, pluginErrors: [String: Int] = [:]) {
        seen.withLock { seen in
            let overruns = registry.makeCounter(name: "netpath_netlink_overruns_total", help: "Netlink receive-buffer overruns detected.")
            if engine.overruns > seen.overruns { overruns.increment(by: Int64(engine.overruns - seen.overruns)) }
            seen.overruns = max(seen.overruns, engine.overruns)
            let resyncs = registry.makeCounter(name: "netpath_netlink_resyncs_total", help: "Full re-dumps after overruns.")
            if engine.resyncs > seen.resyncs { resyncs.increment(by: Int64(engine.resyncs - seen.resyncs)) }
            seen.resyncs = max(seen.resyncs, engine.resyncs)

            for (key, count) in hooks.runs {
                let before = seen.hookRuns[key] ?? 0
                guard count > before else { continue }
                registry.makeCounter(
                    name: "netpath_hook_runs_total",
                    labels: [("hook", key.hook), ("outcome", key.outcome.rawValue)],
                    help: "Hook runs, by hook and outcome."
                ).increment(by: Int64(count - before))
                seen.hookRuns[key] = count
            }
            for (hook, result) in hooks.lastResults where seen.hookResults[hook] != result {
                registry.makeDurationHistogram(
                    name: "netpath_hook_duration_seconds",
                    labels: [("hook", hook)],
                    buckets: Self.durationBuckets,
                    help: "How long hook runs took."
                ).record(result.duration)
                seen.hookResults[hook] = result
            }
            for (plugin, count) in pluginErrors {
                let before = seen.pluginErrors[plugin] ?? 0
                guard count > before else { continue }
                registry.makeCounter(
                    name: "netpath_plugin_errors_total",
                    labels: [("plugin", plugin)],
                    help: "Plugin handler failures (threw or timed out)."
                ).increment(by: Int64(count - before))
                seen.pluginErrors[plugin] = count
            }
        }
    }

    /// The exposition text.
    func text() -> String { registry.emitToString() }
}
