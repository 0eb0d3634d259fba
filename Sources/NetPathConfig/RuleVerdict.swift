// SPDX-License-Identifier: Apache-2.0

/// Whether one rule matches one event, and why: what `netpathctl explain` shows per rule.
public struct RuleVerdict: Hashable, Sendable, CustomStringConvertible {
    /// The filters of a rule, in the order they are checked.
    public enum Criterion: String, Hashable, Sendable, CaseIterable {
        /// The event name is not in `on`.
        case event
        /// The path event belongs to another policy.
        case policy
        /// The interface name (or the path's primary's) does not match the glob.
        case interface
        /// The interface type (or the path's primary's) is not listed.
        case type
        /// The interface's metered flag (or the path's is_expensive) differs.
        case metered
        /// The interface's connectivity (or the path's) is not listed.
        case connectivity
    }

    /// The rule's name; `nil` in dispatcher mode.
    public var rule: String?
    /// The first criterion that failed; `nil` when the rule matches.
    public var failed: Criterion?
    /// The reason in words, e.g. `"up" is not in on ["down"]` or `matches: every hook; timeout 30s`.
    public var reason: String
    /// Where the event goes because of this rule, when it matches.
    public var target: DispatchTarget?

    /// Creates a verdict.
    public init(rule: String?, failed: Criterion?, reason: String, target: DispatchTarget?) {
        self.rule = rule
        self.failed = failed
        self.reason = reason
        self.target = target
    }

    /// Whether the rule matches.
    public var matched: Bool { failed == nil }

    /// `rule "NAME": REASON`.
    public var description: String {
        (rule.map { "rule \(TOMLValue.quoted($0))" } ?? "dispatcher mode") + ": " + reason
    }
}
