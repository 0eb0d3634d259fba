// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Decides where each event goes: the rules it matches, and for each the hooks, plugins and timeout.
///
/// A pure function of the event and the configuration:
///
/// ```swift
/// let matcher = RuleMatcher(configuration: configuration)
/// for target in matcher.targets(for: event) { dispatch(event, to: target) }
/// ```
///
/// With no rules (dispatcher mode), every event goes to every hook and to every plugin that has
/// a `[plugin.NAME]` table. Otherwise each matching rule gives one target, in file order; see
/// ``Rule`` for what each filter means.
public struct RuleMatcher: Sendable {
    /// The configuration whose rules are matched.
    public var configuration: Configuration {
        didSet { index = Index(configuration) }
    }

    /// What does not change between events, computed once per configuration (load and reload):
    /// for each event name the rules whose `on` names it, and each rule's target. An event is
    /// then checked only against the rules that can match it.
    private struct Index: Sendable {
        var rules: [Event.Name: [(rule: Rule, target: DispatchTarget)]] = [:]
        var dispatcherTarget: DispatchTarget?

        init(_ configuration: Configuration) {
            if configuration.isDispatcherMode {
                dispatcherTarget = DispatchTarget(
                    rule: nil,
                    hooks: .all,
                    plugins: configuration.plugins.keys.sorted(),
                    timeout: configuration.agent.hookTimeout
                )
            }
            for rule in configuration.rules {
                let target = RuleMatcher.target(for: rule, configuration)
                for name in Set(rule.on) { rules[name, default: []].append((rule, target)) }
            }
        }
    }

    private var index: Index

    /// Creates a matcher for `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.index = Index(configuration)
    }

    /// The targets for `event`, one per matching rule, in file order.
    public func targets(for event: Event) -> [DispatchTarget] {
        if let target = index.dispatcherTarget { return [target] }
        // In file order: the index keeps it within each event name.
        return (index.rules[event.name] ?? []).compactMap { rule, target in
            Self.mismatch(rule, event) == nil ? target : nil
        }
    }

    /// For `netpathctl explain`: for every rule, whether `event` matches it and, when it does not,
    /// the first criterion that failed, in words.
    public func explain(_ event: Event) -> [RuleVerdict] {
        if configuration.isDispatcherMode {
            let target = targets(for: event)[0]
            return [
                RuleVerdict(
                    rule: nil,
                    failed: nil,
                    reason: "no rules are configured: every event goes to \(target)",
                    target: target
                )
            ]
        }
        return configuration.rules.map { rule in
            if let (criterion, reason) = Self.mismatch(rule, event) {
                return RuleVerdict(rule: rule.name, failed: criterion, reason: reason, target: nil)
            }
            let target = Self.target(for: rule, configuration)
            return RuleVerdict(rule: rule.name, failed: nil, reason: "matches: \(target)", target: target)
        }
    }

    private static func target(for rule: Rule, _ configuration: Configuration) -> DispatchTarget {
        DispatchTarget(
            rule: rule.name,
            hooks: rule.run.map { .named($0) } ?? .all,
            plugins: rule.plugins,
            timeout: rule.timeout ?? configuration.agent.hookTimeout
        )
    }

    /// The first filter of `rule` that `event` fails, and why; `nil` when it matches.
    static func mismatch(_ rule: Rule, _ event: Event) -> (RuleVerdict.Criterion, String)? {
        if !rule.on.contains(event.name) {
            return (.event, "\(q(event.name.rawValue)) is not in on [\(list(rule.on.map(\.rawValue)))]")
        }
        if let policy = rule.policy {
            // Naming a policy asks for path events: `on = ["changed"]` with a policy means "the
            // path changed", not also "an interface's MTU changed".
            guard event.scope == .path else {
                return (
                    .policy,
                    "the rule names policy \(q(policy)), so it takes path events only; this is an interface event"
                )
            }
            if event.policy != policy {
                return (.policy, "the event is for policy \(q(event.policy ?? "")), not \(q(policy))")
            }
        }

        let subject = Subject(event)
        if let glob = rule.interface, !glob.matches(subject.name ?? "") {
            guard let name = subject.name else {
                return (.interface, "the path has no primary interface to match \(q(glob.pattern))")
            }
            return (.interface, "\(subject.noun) \(q(name)) does not match \(q(glob.pattern))")
        }
        if !rule.type.isEmpty {
            let wanted = "type [\(list(rule.type.map(\.rawValue)))]"
            guard let type = subject.type else {
                let what =
                    event.scope == .path ? "the path has no primary interface" : "the event has no interface type"
                return (.type, "\(what) to match \(wanted)")
            }
            if !rule.type.contains(type) {
                return (.type, "\(subject.noun) \(q(subject.name ?? "")) has type \(type), not in \(wanted)")
            }
        }
        if let wanted = rule.metered {
            let word = event.scope == .path ? "expensive" : "metered"
            guard let metered = subject.isMetered else {
                return (.metered, "the event does not say whether it is \(word); the rule wants metered = \(wanted)")
            }
            if metered != wanted {
                let what = event.scope == .path ? "the path" : "interface \(q(subject.name ?? ""))"
                return (.metered, "\(what) is \(metered ? "" : "not ")\(word); the rule wants metered = \(wanted)")
            }
        }
        if !rule.connectivity.isEmpty {
            let state = subject.connectivity ?? .unknown
            if !rule.connectivity.contains(state) {
                let what =
                    event.scope == .path
                    ? "the path's connectivity" : "interface \(q(subject.name ?? ""))'s connectivity"
                return (
                    .connectivity,
                    "\(what) is \(state), not in connectivity [\(list(rule.connectivity.map(\.rawValue)))]"
                )
            }
        }
        return nil
    }

    /// What the interface filters look at: the interface for interface events, the primary for path events.
    private struct Subject {
        var noun: String
        var name: String?
        var type: InterfaceType?
        var isMetered: Bool?
        var connectivity: Connectivity?

        init(_ event: Event) {
            switch event.scope {
            case .interface:
                noun = "interface"
                name = event.interface ?? event.interfaceState?.name
                type = event.interfaceType ?? event.interfaceState?.type
                isMetered = event.interfaceState?.isMetered
                connectivity = event.connectivity ?? event.interfaceState?.connectivity
            case .path:
                noun = "primary interface"
                name = event.path.map { $0.primary?.name } ?? event.interface
                type = event.path.map { $0.primary?.type } ?? event.interfaceType
                isMetered = event.path?.isExpensive
                connectivity = event.connectivity ?? event.path?.connectivity
            default:
                // A scope this version does not know names no interface: the filters do not match it.
                noun = event.scope.rawValue
                connectivity = event.connectivity
            }
        }
    }

    private static func q(_ s: String) -> String { TOMLValue.quoted(s) }

    private static func list(_ names: [String]) -> String { names.map(q).joined(separator: ", ") }
}
