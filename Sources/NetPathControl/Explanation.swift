// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathConfig
import NetPathCore

/// What `netpathctl explain` says about one state under one configuration, as text and as JSON.
///
/// The agent and the command-line tool share it, so `explain` reads the same with or without
/// `--local`.
package struct Explanation: Sendable {
    package let configuration: Configuration
    package let evaluations: [(PathPolicy, PathEvaluation)]
    /// The current state as events: what a rule would see at startup.
    package let events: [Event]
    /// The interfaces as the state shows them, for the connectivity section.
    package let interfaces: [Interface]
    /// The links `[agent] ignore` keeps out of the state, with why.
    package let ignored: [IgnoredInterface]

    package init(state: SystemState, configuration: Configuration, time: Date, ignored: [IgnoredInterface] = []) {
        self.configuration = configuration
        self.ignored = ignored
        interfaces = state.interfaces
        evaluations = configuration.policies.map { ($0, PathEvaluator(policy: $0).evaluate(state)) }
        var tracker = PathTracker(policies: configuration.policies)
        events = tracker.start(with: state, at: time)
    }

    // MARK: Text

    /// The human form.
    package var text: String {
        var out = ""
        for (policy, evaluation) in evaluations {
            out += "Policy \"\(policy.name)\" (\(Self.summary(policy)))\n"
            let path = evaluation.path
            out += "  \(path.status.rawValue)"
            if let primary = path.primary { out += " via \(primary.name) (\(primary.type))" }
            if let reason = path.unsatisfiedReason { out += ": \(reason.rawValue)" }
            out += "\n"
            var rows: [[String]] = []
            var ahead: PathEvaluation.Verdict?
            for verdict in evaluation.verdicts {
                let (mark, why) = Self.describe(verdict, ahead: ahead, policy: policy)
                rows.append([
                    "    " + mark, verdict.interface.name, verdict.interface.type.rawValue, why, verdict.detail,
                ])
                if case .rejected = verdict.outcome {} else { ahead = verdict }
            }
            out += TextTable.render(rows)
            out += "\n"
        }
        out += connectivityText
        out += ignoredText
        out +=
            configuration.isDispatcherMode
            ? "Rules: none configured (dispatcher mode): every event runs every hook in \(configuration.agent.hooksDirectory)\n"
            : "Rules (against the current state's events, as dispatched at startup)\n"
        let matcher = RuleMatcher(configuration: configuration)
        if !configuration.isDispatcherMode {
            for (index, rule) in configuration.rules.enumerated() {
                out += "  \"\(rule.name)\"\n"
                var rows: [[String]] = []
                for event in events {
                    let verdict = matcher.explain(event)[index]
                    rows.append(["    " + (verdict.matched ? "✓" : "✗"), Self.label(event), verdict.reason])
                }
                out += TextTable.render(rows)
            }
        }
        return out
    }

    /// The probed interfaces with the evidence behind each state, and which `unknown` each
    /// `unknown` is (not probed yet, probing off, the probe failed); empty when probing is off
    /// and no policy requires connectivity.
    var connectivityText: String {
        let covered = interfaces.filter { i in
            i.connectivityEvidence != nil || configuration.connectivity?.probes(i) == true
        }
        let requiring = configuration.policies.contains { $0.requireConnectivity != nil }
        guard !covered.isEmpty || configuration.connectivity != nil || requiring else { return "" }
        var out = "Connectivity (docs/connectivity.md)\n"
        guard configuration.connectivity != nil || !covered.isEmpty else {
            out +=
                "  probing is off (no [connectivity] table): every interface is unknown, and require_connectivity takes none out\n\n"
            return out
        }
        if !covered.contains(where: { $0.connectivityEvidence != nil }) {
            out += "  nothing probed yet\n\n"
            return out
        }
        var rows: [[String]] = []
        for i in covered {
            var state = i.connectivity.rawValue
            if i.connectivityProbeFailed {
                state += " (the probe failed)"
            } else if i.connectivityEvidence == nil {
                state += " (not probed yet)"
            }
            if let url = i.portalURL { state += " \(url.escapingControlCharacters)" }
            var quality: [String] = []
            if let rtt = i.roundTrip { quality.append("\(Int(rtt.milliseconds.rounded())) ms") }
            if let loss = i.loss { quality.append("loss \(Int((loss * 100).rounded()))%") }
            rows.append([
                "    " + i.name.escapingControlCharacters, state, quality.joined(separator: ", "),
                (i.connectivityEvidence ?? "").escapingControlCharacters,
            ])
        }
        out += TextTable.render(rows) + "\n"
        return out
    }

    /// The links not tracked and why; empty when there are none.
    var ignoredText: String {
        guard !ignored.isEmpty else { return "" }
        var out = "Ignored links (\(ignored.count); [agent] ignore: no events, hooks, plugins or probes)\n"
        out += TextTable.render(ignored.map { ["    " + $0.name.escapingControlCharacters, "\($0.index)", $0.reason] })
        return out + "\n"
    }

    static func summary(_ p: PathPolicy) -> String {
        var parts = ["require " + (p.require.isEmpty ? "any" : p.require.map(\.rawValue).joined(separator: ", "))]
        if !p.prohibit.isEmpty { parts.append("prohibit " + p.prohibit.map(\.rawValue).joined(separator: ", ")) }
        parts.append("metered \(p.metered.rawValue)")
        parts.append(
            "prefer " + (p.prefer.isEmpty ? "the kernel's choice" : p.prefer.map(\.rawValue).joined(separator: " > "))
        )
        if let target = p.target { parts.append("target \(target)") }
        if let required = p.requireConnectivity { parts.append("require_connectivity \(required)") }
        return parts.joined(separator: " · ")
    }

    /// A mark (✓ primary, rank number, ✗ rejected) and the reason in words.
    static func describe(_ v: PathEvaluation.Verdict, ahead: PathEvaluation.Verdict?, policy: PathPolicy) -> (
        String, String
    ) {
        switch v.outcome {
        case .primary:
            return ("✓", "primary")
        case .candidate(let rank, let ranking):
            let winner = ahead?.interface
            let why: String
            switch ranking {
            case .meteredAvoided:
                why = "lost: metered, and metered = \"avoid\" puts unmetered \(winner?.name ?? "links") first"
            case .lowerPreference:
                why = "lost: \(v.interface.type) comes after \(winner?.type.rawValue ?? "?") in prefer"
            case .notKernelRoute:
                why = "lost: the kernel routes traffic to the internet through \(winner?.name ?? "?") (ip route get)"
            case .higherMetric: why = "lost: higher route metric than \(winner?.name ?? "?")"
            case .tieBreak: why = "lost: tie with \(winner?.name ?? "?"), broken by interface index"
            }
            return ("\(rank + 1)", why)
        case .rejected(let rejection):
            return ("✗", rejection.rawValue.replacingDashes)
        }
    }

    static func label(_ event: Event) -> String {
        switch event.scope {
        case .interface: return "interface \(event.name) \(event.interface ?? "")"
        case .path: return "path \(event.name) (\(event.policy ?? ""))"
        default: return "\(event.scope) \(event.name)"
        }
    }

    // MARK: JSON

    /// The JSON form.
    package struct Report: Codable, Sendable {
        package struct Policy: Codable, Sendable {
            package var policy: PathPolicy
            package var path: NetworkPath
            package var interfaces: [Verdict]
        }

        package struct Verdict: Codable, Sendable {
            package var name: String
            package var index: Int32
            package var type: InterfaceType
            package var outcome: String
            package var rank: Int?
            package var reason: String
            package var detail: String
        }

        package struct RuleReport: Codable, Sendable {
            package var rule: String?
            package var events: [EventVerdict]
        }

        package struct EventVerdict: Codable, Sendable {
            package var event: String
            package var scope: String
            package var interface: String?
            package var policy: String?
            package var matched: Bool
            package var criterion: String?
            package var reason: String
            package var target: String?
        }

        /// One probed interface's connectivity and the evidence for it.
        package struct ConnectivityVerdict: Codable, Sendable {
            package var interface: String
            package var connectivity: Connectivity
            package var portalURL: String?
            package var roundTripMilliseconds: Double?
            package var loss: Double?
            package var evidence: String

            enum CodingKeys: String, CodingKey {
                case interface, connectivity
                case portalURL = "portal_url"
                case roundTripMilliseconds = "rtt_ms"
                case loss, evidence
            }
        }

        package var policies: [Policy]
        package var rules: [RuleReport]
        /// The probed interfaces; absent from agents older than connectivity probing.
        package var connectivity: [ConnectivityVerdict]?
        /// The links `[agent] ignore` keeps out; absent from agents older than it.
        package var ignored: [IgnoredInterface]?
    }

    /// The JSON form's value.
    package var report: Report {
        let policies = evaluations.map { policy, evaluation in
            Report.Policy(
                policy: policy,
                path: evaluation.path,
                interfaces: evaluation.verdicts.map { v in
                    let (outcome, rank, reason): (String, Int?, String)
                    switch v.outcome {
                    case .primary: (outcome, rank, reason) = ("primary", 0, "primary")
                    case .candidate(let r, let ranking): (outcome, rank, reason) = ("candidate", r, ranking.rawValue)
                    case .rejected(let rejection): (outcome, rank, reason) = ("rejected", nil, rejection.rawValue)
                    }
                    return Report.Verdict(
                        name: v.interface.name,
                        index: v.interface.index,
                        type: v.interface.type,
                        outcome: outcome,
                        rank: rank,
                        reason: reason,
                        detail: v.detail
                    )
                }
            )
        }
        let matcher = RuleMatcher(configuration: configuration)
        let ruleCount = configuration.isDispatcherMode ? 1 : configuration.rules.count
        let rules = (0..<ruleCount).map { index in
            Report.RuleReport(
                rule: configuration.isDispatcherMode ? nil : configuration.rules[index].name,
                events: events.map { event in
                    let verdict = matcher.explain(event)[index]
                    return Report.EventVerdict(
                        event: event.name.rawValue,
                        scope: event.scope.rawValue,
                        interface: event.interface,
                        policy: event.policy,
                        matched: verdict.matched,
                        criterion: verdict.failed?.rawValue,
                        reason: verdict.reason,
                        target: verdict.target?.description
                    )
                }
            )
        }
        let connectivity = interfaces.compactMap { i in
            i.connectivityEvidence.map {
                Report.ConnectivityVerdict(
                    interface: i.name,
                    connectivity: i.connectivity,
                    portalURL: i.portalURL,
                    roundTripMilliseconds: i.roundTrip?.milliseconds,
                    loss: i.loss,
                    evidence: $0
                )
            }
        }
        return Report(policies: policies, rules: rules, connectivity: connectivity, ignored: ignored)
    }
}

extension String {
    fileprivate var replacingDashes: String { String(map { $0 == "-" ? " " : $0 }) }
}
