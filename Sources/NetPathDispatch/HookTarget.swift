// SPDX-License-Identifier: Apache-2.0

/// Which hooks one event goes to because of one rule, and with what timeout: the dispatcher's
/// input next to the event.
///
/// The configuration layer's rule matcher produces one target per matching rule; in dispatcher
/// mode (no rules) there is one target, ``all(timeout:)``.
package struct HookTarget: Hashable, Sendable, CustomStringConvertible {
    /// Which hooks in the hooks directory to run.
    package enum Hooks: Hashable, Sendable {
        /// Every accepted hook, in lexical order.
        case all
        /// These hooks, by file name; they still run in lexical order, and a name that is not in
        /// the directory is skipped (and logged once).
        case named([String])

        /// Whether the hook or script `name` is one of these.
        func includes(_ name: String) -> Bool {
            switch self {
            case .all: return true
            case .named(let names): return names.contains(name)
            }
        }
    }

    /// The rule that matched (`NETPATH_RULE`); `nil` in dispatcher mode.
    package var rule: String?
    package var hooks: Hooks
    /// The timeout of each hook run.
    package var timeout: Duration

    package init(rule: String? = nil, hooks: Hooks = .all, timeout: Duration) {
        self.rule = rule
        self.hooks = hooks
        self.timeout = timeout
    }

    /// Every hook, no rule: what an event gets when the configuration has no rules.
    package static func all(timeout: Duration) -> HookTarget {
        HookTarget(rule: nil, hooks: .all, timeout: timeout)
    }

    package var description: String {
        let which: String
        switch hooks {
        case .all: which = "every hook"
        case .named(let names): which = names.joined(separator: ", ")
        }
        return "\(rule.map { "rule \($0): " } ?? "")\(which), timeout \(timeout)"
    }
}
