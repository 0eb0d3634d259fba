// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch

extension Netpathctl {
    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay a recorded trace through policies, settle and rules; print what would be dispatched.",
            discussion: """
                A trace is what `netpathd --record FILE` or `netpathctl monitor --local --record FILE` \
                writes: a header line, then one JSON state per line. Each resulting event is printed \
                with the rule targets it would be dispatched to; nothing is run (a dry run). \
                The configuration's [[interface]] overrides are applied to the recorded interfaces, \
                and settle uses the trace's own timestamps, so a replay is deterministic. \
                With --run-hooks, the matching hooks really run (trust checks, environment, stdin \
                JSON, timeouts: exactly as netpathd runs them), those of hooks_dir and of every \
                [[hook_dir]] with its dialect, one event after another as fast as \
                they complete rather than at the trace's pace; their output goes to stderr. \
                A trace whose last line is an unfinished record (the recording was cut short, e.g. \
                by a full disk) replays every complete record, with a warning naming that line on \
                stderr; the exit status is still 0. Any other malformed line is an error (exit status 1).
                """
        )

        @OptionGroup var config: ConfigOptions

        @Option(name: .long, help: ArgumentHelp("The trace to replay.", valueName: "FILE"))
        var trace: String

        @Flag(name: .long, help: "Run the hooks each event is dispatched to (not a dry run).")
        var runHooks = false

        @Option(
            name: .long,
            help: ArgumentHelp(
                "With --run-hooks: the hooks directory instead of the configuration's hooks_dir.",
                valueName: "DIR"
            )
        )
        var hooksDir: String?

        func run() async throws {
            let configuration = try config.load().configuration
            switch TraceFile.load(path: trace) {
            case .failure(let error):
                FileOutput.write("\(error)\n", to: 2)
                throw ExitCode(1)
            case .success(let contents):
                // A trace cut short still replays: its complete records are good, and the
                // warning says the last one was dropped. The exit status stays 0.
                if let truncation = contents.truncation { FileOutput.write("\(truncation)\n", to: 2) }
                let replay = Replay(configuration: configuration)
                let dispatches = replay.dispatches(contents.records)
                if runHooks {
                    try await run(
                        dispatches,
                        hooksDirectory: hooksDir ?? configuration.agent.hooksDirectory,
                        dialectDirectories: configuration.hookDirectories,
                        maxRunningHooks: configuration.agent.maxRunningHooks,
                        // As netpathd: without startup events, the first state is what
                        // networkd-dispatcher scripts last saw.
                        assumedState: configuration.agent.startupEvents
                            ? [] : contents.records.first?.state.interfaces ?? []
                    )
                } else {
                    for dispatch in dispatches { print(Replay.line(dispatch)) }
                }
            }
        }

        /// Prints each event's line, then runs its hooks through the agent's own dispatcher.
        private func run(
            _ dispatches: [Replay.Dispatch],
            hooksDirectory: String,
            dialectDirectories settings: [HookDirectorySetting],
            maxRunningHooks: Int,
            assumedState: [Interface]
        ) async throws {
            LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
            let logger = Logger(label: "netpathctl.simulate")
            let directory = HookDirectory(path: hooksDirectory, logger: logger)
            let dialectDirectories = settings.map { DialectHookDirectory(setting: $0, logger: logger) }
            let dispatcher = HookDispatcher(
                directory: directory,
                dialectDirectories: dialectDirectories,
                runner: HookRunner(logger: logger),
                options: .init(maxRunningHooks: maxRunningHooks),
                logger: logger
            )
            dispatcher.assumeNetworkdState(assumedState)
            // What will not run, and why: refused and ignored files (not the empty or missing
            // directories, which are normal here).
            for report in HookDispatcher.reports(native: directory, dialectDirectories: dialectDirectories)
            where !report.name.isEmpty && report.status != "accepted" {
                let why = report.reason.map { "\(report.status): \($0)" } ?? report.status
                let path = "\(report.directory ?? hooksDirectory)/\(report.name)"
                FileOutput.write("\(path.escapingControlCharacters): \(why)\n", to: 2)
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await dispatcher.run() }
                for dispatch in dispatches {
                    print(Replay.line(dispatch))
                    dispatcher.dispatch(dispatch.event, to: dispatch.targets.compactMap(HookTarget.init))
                    // One event at a time, so output reads in the trace's order.
                    await dispatcher.waitUntilIdle()
                }
                group.cancelAll()
            }
            let statistics = dispatcher.statistics
            let runs = statistics.runs.values.reduce(0, +)
            let failed = statistics.runs.filter { $0.key.outcome != .success }.values.reduce(0, +)
            FileOutput.write("ran \(runs) hook\(runs == 1 ? "" : "s"), \(failed) failed or timed out\n", to: 2)
            if failed > 0 { throw ExitCode(1) }
        }
    }
}

/// Replays trace records through the same stages as the agent: tracker, settle, rules.
struct Replay {
    let configuration: Configuration

    /// One event and where the rules send it.
    struct Dispatch {
        var event: Event
        var targets: [DispatchTarget]
    }

    /// The events and their targets, in the order the agent would dispatch them.
    func dispatches(_ records: [Trace.Record]) -> [Dispatch] {
        guard let first = records.first else { return [] }
        let classifier = InterfaceClassifier(overrides: configuration.interfaces)
        let matcher = RuleMatcher(configuration: configuration)
        var tracker = PathTracker(policies: configuration.policies)
        var settler = Settler(window: configuration.agent.settle)
        // Settle runs on the trace's clock: offsets from the first record, on an arbitrary base.
        let base = ContinuousClock.now
        func instant(_ time: Date) -> ContinuousClock.Instant {
            base + .microseconds(Int64((time.timeIntervalSince(first.time) * 1_000_000).rounded()))
        }

        var events: [Event] = []
        for (i, record) in records.enumerated() {
            let state = Self.reclassify(record.state, with: classifier)
            let now = instant(record.time)
            events += settler.tick(at: now)
            if i == 0 {
                let startup = tracker.start(with: state, at: record.time)
                if configuration.agent.startupEvents {
                    events += settler.receive(startup, at: now)
                } else {
                    settler.remember(startup)
                }
            } else {
                events += settler.receive(tracker.update(to: state, at: record.time), at: now)
            }
        }
        events += settler.flush()
        return events.map { Dispatch(event: $0, targets: matcher.targets(for: $0)) }
    }

    /// The dispatch lines, one per event.
    func run(_ records: [Trace.Record]) -> [String] {
        dispatches(records).map(Self.line)
    }

    /// `TIME  SCOPE EVENT …  → targets`.
    static func line(_ dispatch: Dispatch) -> String {
        let destination =
            dispatch.targets.isEmpty
            ? "(no rule matches)"
            : dispatch.targets.map { ($0.rule.map { "rule \"\($0)\"" } ?? "dispatcher") + ": \($0)" }.joined(
                separator: " | "
            )
        return "\(RFC3339.format(dispatch.event.time))  \(describe(dispatch.event))  → \(destination)"
    }

    /// Applies the configuration's overrides on top of the recorded classification.
    static func reclassify(_ state: SystemState, with classifier: InterfaceClassifier) -> SystemState {
        guard !classifier.overrides.isEmpty else { return state }
        var copy = state
        copy.interfaces = state.interfaces.map { interface in
            var i = interface
            for override in classifier.overrides where override.match.matches(i.name) {
                if let type = override.type { i.type = type }
                if let metered = override.metered {
                    i.isMetered = metered
                    i.meteredReason = .override
                }
                if let constrained = override.constrained { i.isConstrained = constrained }
            }
            return i
        }
        return copy
    }

    static func describe(_ event: Event) -> String {
        var text = "\(event.scope.rawValue) \(event.name.rawValue)"
        if event.startup { text += " (startup)" }
        switch event.scope {
        case .interface:
            text += " \(event.interface ?? "-")"
            if let type = event.interfaceType { text += " (\(type))" }
            if let address = event.address { text += " \(address)" }
            if !event.changes.isEmpty { text += " [\(event.changes.joined(separator: ", "))]" }
        case .path:
            text += " \(event.policy ?? "-"):"
            if let path = event.path {
                text += " \(path.status.rawValue)"
                if let primary = path.primary { text += " via \(primary.name) (\(primary.type))" }
                if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
            }
            if let previous = event.previousInterface, previous != event.interface { text += ", was \(previous)" }
        default:
            break
        }
        return text
    }
}
