// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch
import NetPathLinux
import Prometheus
import Synchronization

/// The agent's Prometheus metrics, kept in a `PrometheusCollectorRegistry` and served as text by
/// ``MetricsServer``.
///
/// Hook runs are recorded as each ends (the dispatcher calls ``record(_:)``). Counters kept
/// elsewhere as plain values (the engine's overruns, plugin failures) are carried over as
/// deltas whenever they are read, so each series only ever increases.
final class AgentMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    private struct Seen {
        var overruns: UInt64 = 0
        var resyncs: UInt64 = 0
        var primaries: [String: String] = [:]
        var pluginErrors: [String: Int] = [:]
        var probes = 0
        var probedInterfaces: Set<String> = []
    }
    private let seen = Mutex(Seen())

    // The series, named netpath_<metric>_<unit> by swift-prometheus. Computed, not stored:
    // MetricNameDescriptor is not Sendable, and a registry returns the same series for equal names.
    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "netpath", metricName: metric, unitName: unit, helpText: help)
    }
    static var events: MetricNameDescriptor { name("events", "total", "Events dispatched, by name and scope.") }
    static var pathSatisfied: MetricNameDescriptor {
        name("path_satisfied", "", "1 when the policy's path is satisfied, else 0.")
    }
    static var pathPrimary: MetricNameDescriptor {
        name("path_primary", "", "1 for the policy's current primary interface.")
    }
    static var overruns: MetricNameDescriptor {
        name("netlink_overruns", "total", "Netlink receive-buffer overruns detected.")
    }
    static var resyncs: MetricNameDescriptor {
        name(
            "netlink_resyncs",
            "total",
            "Full re-dumps of the kernel state: after overruns, resumes, ignore-list changes."
        )
    }
    static var hookRuns: MetricNameDescriptor { name("hook_runs", "total", "Hook runs, by hook and outcome.") }
    static var hookDuration: MetricNameDescriptor { name("hook_duration", "seconds", "How long hook runs took.") }
    static var pluginErrors: MetricNameDescriptor {
        name("plugin_errors", "total", "Plugin handler failures (threw or timed out).")
    }
    static var connectivity: MetricNameDescriptor {
        name("connectivity", "", "1 for the interface's connectivity state (after hysteresis), 0 for the others.")
    }
    static var connectivityRoundTrip: MetricNameDescriptor {
        name("connectivity_rtt", "seconds", "The round-trip time of the interface's last connectivity probe.")
    }
    static var connectivityLoss: MetricNameDescriptor {
        name("connectivity_loss", "ratio", "The fraction of the last connectivity probe's requests without an answer.")
    }
    static var connectivityProbes: MetricNameDescriptor {
        name("connectivity_probes", "total", "Connectivity probes started.")
    }
    static var buildInfo: MetricNameDescriptor {
        name("build_info", "", "Always 1; the version label is netpath's version (netpathd --version).")
    }

    /// Hook run durations, seconds; hooks usually take milliseconds, a hung one its timeout.
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
    ]

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        // The usual info metric: dashboards join on it to tell which version each agent runs.
        registry.makeGauge(descriptor: Self.buildInfo, labels: [("version", NetPathVersion.current)]).set(Int64(1))
    }

    /// Counts one dispatched event.
    func record(_ event: Event) {
        // The counter of each (event, scope) is looked up in the registry once: the lookup (a
        // descriptor built, labels compared under the registry's lock) ran on the engine's thread
        // for every event while its hook was starting.
        let key = EventKey(name: event.name, scope: event.scope)
        let counter = eventCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.events,
                labels: [("event", event.name.rawValue), ("scope", event.scope.rawValue)]
            )
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    private struct EventKey: Hashable {
        var name: Event.Name
        var scope: Event.Scope
    }

    private let eventCounters = Mutex<[EventKey: Counter]>([:])

    /// Sets the per-policy path gauges.
    func record(paths: [NetworkPath]) {
        seen.withLock { seen in
            for path in paths {
                registry.makeGauge(descriptor: Self.pathSatisfied, labels: [("policy", path.policy)]).set(
                    Int64(path.status == .satisfied ? 1 : 0)
                )
                let primary = path.primary?.name ?? ""
                if let old = seen.primaries[path.policy], old != primary {
                    registry.makeGauge(
                        descriptor: Self.pathPrimary,
                        labels: [("policy", path.policy), ("interface", old)]
                    ).set(Int64(0))
                }
                if !primary.isEmpty {
                    registry.makeGauge(
                        descriptor: Self.pathPrimary,
                        labels: [("policy", path.policy), ("interface", primary)]
                    ).set(Int64(1))
                }
                seen.primaries[path.policy] = primary
            }
        }
    }

    /// Sets the connectivity gauges of the probed interfaces, and counts the probes started
    /// (`probes`, a running total). An interface no longer probed shows `unknown`.
    func record(connectivity: [(name: String, tracker: ConnectivityTracker)], probes: Int) {
        seen.withLock { seen in
            if probes > seen.probes {
                registry.makeCounter(descriptor: Self.connectivityProbes).increment(by: Int64(probes - seen.probes))
                seen.probes = probes
            }
            var states: [String: Connectivity] = [:]
            for (name, tracker) in connectivity {
                states[name] = tracker.connectivity
                if let rtt = tracker.roundTrip {
                    registry.makeGauge(descriptor: Self.connectivityRoundTrip, labels: [("interface", name)]).set(
                        rtt.milliseconds / 1000
                    )
                }
                if let loss = tracker.loss {
                    registry.makeGauge(descriptor: Self.connectivityLoss, labels: [("interface", name)]).set(loss)
                }
            }
            for name in seen.probedInterfaces.union(states.keys) {
                let current = states[name] ?? .unknown
                for state in Connectivity.allCases {
                    registry.makeGauge(
                        descriptor: Self.connectivity,
                        labels: [("interface", name), ("state", state.rawValue)]
                    ).set(Int64(state == current ? 1 : 0))
                }
            }
            seen.probedInterfaces.formUnion(states.keys)
        }
    }

    /// Counts one hook run and records its duration: called by the dispatcher as each run ends,
    /// so every run lands in the histogram, not just the last one before a scrape.
    func record(_ result: HookResult) {
        registry.makeCounter(
            descriptor: Self.hookRuns,
            labels: [("hook", result.hook), ("outcome", result.outcome.rawValue)]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.hookDuration,
            labels: [("hook", result.hook)],
            buckets: Self.durationBuckets
        ).record(result.duration)
    }

    /// Carries over the engine's and the plugin runner's counters.
    func update(engine: EngineStatistics, pluginErrors: [String: Int] = [:]) {
        seen.withLock { seen in
            let overruns = registry.makeCounter(descriptor: Self.overruns)
            if engine.overruns > seen.overruns { overruns.increment(by: Int64(engine.overruns - seen.overruns)) }
            seen.overruns = max(seen.overruns, engine.overruns)
            let resyncs = registry.makeCounter(descriptor: Self.resyncs)
            if engine.resyncs > seen.resyncs { resyncs.increment(by: Int64(engine.resyncs - seen.resyncs)) }
            seen.resyncs = max(seen.resyncs, engine.resyncs)

            for (plugin, count) in pluginErrors {
                let before = seen.pluginErrors[plugin] ?? 0
                guard count > before else { continue }
                registry.makeCounter(descriptor: Self.pluginErrors, labels: [("plugin", plugin)]).increment(
                    by: Int64(count - before)
                )
                seen.pluginErrors[plugin] = count
            }
        }
    }

    /// The exposition text.
    func text() -> String { registry.emitToString() }
}
