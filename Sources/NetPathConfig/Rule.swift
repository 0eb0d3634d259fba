// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// One `[[rule]]`: which events go to which hooks and plugins.
///
/// An event matches a rule when it passes every filter that is set:
///
/// - ``on``: the event's name is listed (omitted in the file: every event).
/// - ``policy``: the rule takes only path events, of this policy. Naming a policy asks for
///   path events: with `on = ["changed"]` it means "the path changed", not also "an
///   interface's MTU changed". A rule that sets `policy` but fires only on interface events is
///   an error, because it could never match.
/// - ``interface`` and ``type``: the interface's name and type; for path events, the path's
///   primary interface. A path without a primary (unsatisfied) matches only a glob that
///   matches the empty name, such as `*`; validation warns about such a rule on `unsatisfied`.
/// - ``metered``: the interface is metered; for path events, the path is expensive.
/// - ``connectivity``: the interface's connectivity (the path's, for path events) is listed:
///   for `connectivity-changed`, the new state.
public struct Rule: Hashable, Sendable {
    /// The rule's name, unique in the file; shown by `explain` and passed as `NETPATH_RULE`.
    public var name: String
    /// The event names the rule fires on.
    public var on: [Event.Name]
    /// Only path events, of this policy.
    public var policy: String?
    /// Only interfaces (or primaries) whose name matches.
    public var interface: Glob?
    /// Only interfaces (or primaries) of these types; empty means any.
    public var type: [InterfaceType]
    /// Only metered (`true`) or unmetered (`false`) interfaces or paths.
    public var metered: Bool?
    /// Only interfaces (or paths) whose connectivity is one of these; empty means any.
    public var connectivity: [Connectivity]
    /// The hooks to run, by file name in the hooks directory; `nil` means every hook there.
    public var run: [String]?
    /// The in-process plugins to call, by name.
    public var plugins: [String]
    /// The per-hook timeout; `nil` means the agent's `hook_timeout`.
    public var timeout: Duration?
    /// Where the rule's `[[rule]]` header is, when it came from a file.
    public var location: SourceLocation?

    /// Creates a rule; the defaults match every event and run every hook.
    public init(
        name: String,
        on: [Event.Name] = Event.Name.allCases,
        policy: String? = nil,
        interface: Glob? = nil,
        type: [InterfaceType] = [],
        metered: Bool? = nil,
        connectivity: [Connectivity] = [],
        run: [String]? = nil,
        plugins: [String] = [],
        timeout: Duration? = nil,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.on = on
        self.policy = policy
        self.interface = interface
        self.type = type
        self.metered = metered
        self.connectivity = connectivity
        self.run = run
        self.plugins = plugins
        self.timeout = timeout
        self.location = location
    }
}
