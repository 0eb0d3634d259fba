import ArgumentParser
import FoundationEssentials
import NetPath

extension Netpathctl {
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay a recorded trace through policies, settle and rules; print what would be dispatched.",
            discussion: """
                A trace is what `netpathd --record FILE` or `netpathctl monitor --local --record FILE`
                writes: a header line, then one JSON state per line. Each resulting event is printed
                with the rule targets it would be dispatched to; nothing is run (a dry run).
                The configuration's [[interface]] overrides are applied to the recorded interfaces,
                and settle uses the trace's own timestamps, so a replay is deterministic.
                """
        )

        @OptionGroup var config: ConfigOptions

        @Option(name: .long, help: ArgumentHelp("The trace to replay.", valueName: "FILE"))
        var trace: String

        func run() throws {
            let configuration = try config.load().configuration
            let text: String
            do {
                text = try String(contentsOfFile: trace, encoding: .utf8)
            } catch {
                FileOutput.write("\(trace): error: cannot read the trace: \(error)\n", to: 2)
                throw ExitCode(1)
            }
            switch Trace.parse(text, file: trace) {
            case .failure(let error):
                FileOutput.write("\(error)\n", to: 2)
                throw ExitCode(1)
            case .success(let records):
                for line in Replay(configuration: configuration).run(records) { print(line) }
            }
        }
    }
}

/// Replays trace records through the same stages as the agent: tracker, settle, rules.
struct Replay {
    let configuration: Configuration

    /// The dispatch lines, one per event, in the order the agent would dispatch them.
    func run(_ records: [Trace.Record]) -> [String] {
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
        return events.map { event in
            let targets = matcher.targets(for: event)
            let destination = targets.isEmpty
                ? "(no rule matches)"
                : targets.map { ($0.rule.map { "rule \"\($0)\"" } ?? "dispatcher") + ": \($0)" }.joined(separator: " | ")
            return "\(RFC3339.format(event.time))  \(Self.describe(event))  → \(destination)"
        }
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
        }
        return text
    }
}
