// SPDX-License-Identifier: Apache-2.0

/// Where one event goes because of one rule: which hooks, which plugins, how long each hook may run.
///
/// The dispatch layer turns each target into hook invocations (with `NETPATH_RULE` set to
/// ``rule``) and plugin calls.
public struct DispatchTarget: Hashable, Sendable, CustomStringConvertible {
    /// Which hooks in the hooks directory to run.
    public enum Hooks: Hashable, Sendable {
        /// Every accepted hook in the hooks directory, in lexical order.
        case all
        /// These hooks, by file name, run in lexical order like the rest.
        case named([String])
    }

    /// The rule that matched; `nil` in dispatcher mode (no rules configured).
    public var rule: String?
    /// The hooks to run.
    public var hooks: Hooks
    /// The plugins to call, by name.
    public var plugins: [String]
    /// The timeout for each hook: the rule's, or the agent's `hook_timeout`.
    public var timeout: Duration

    /// Creates a target.
    public init(rule: String?, hooks: Hooks, plugins: [String] = [], timeout: Duration) {
        self.rule = rule
        self.hooks = hooks
        self.plugins = plugins
        self.timeout = timeout
    }

    /// `every hook, plugins event-log, timeout 30s`, as `explain` prints it.
    public var description: String {
        var parts: [String] = []
        switch hooks {
        case .all: parts.append("every hook")
        case .named(let names) where names.isEmpty: parts.append("no hooks")
        case .named(let names): parts.append("hooks " + names.joined(separator: ", "))
        }
        if !plugins.isEmpty { parts.append("plugins " + plugins.joined(separator: ", ")) }
        parts.append("timeout \(timeout.configurationText)")
        return parts.joined(separator: "; ")
    }
}
