// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// A validated netpath configuration: the agent's settings, interface overrides, policies,
/// rules and plugin settings.
///
/// Build one with ``ConfigurationLoader``; every value in it has passed validation.
/// ``Configuration/default`` is the embedded `config/netpath.toml`.
public struct Configuration: Hashable, Sendable {
    /// The `[agent]` table.
    public struct Agent: Hashable, Sendable {
        /// Where hooks live (`hooks_dir`).
        public var hooksDirectory: String
        /// How long one hook may run unless a rule says otherwise (`hook_timeout`).
        public var hookTimeout: Duration
        /// The most hooks running at once over all interfaces and policies; a hook that has been
        /// running for a second stops counting, so hung hooks cannot hold the others back
        /// (`max_running_hooks`).
        public var maxRunningHooks: Int
        /// The hold-down for flapping: events are dispatched only after their interface or
        /// policy has been quiet this long (`settle`); zero dispatches at once.
        public var settle: Duration
        /// Whether the current state is dispatched as events at start (`startup_events`).
        public var startupEvents: Bool
        /// The control socket's path (`control_socket`).
        public var controlSocket: String
        /// `HOST:PORT` to serve Prometheus metrics on, or empty for none (`metrics`). The host is
        /// an IP address (IPv6 in brackets) or empty for every address, never a name.
        public var metrics: String
        /// The group whose members may use the control socket for everything but `reload`
        /// (`control_group`); `nil` leaves it to root.
        public var controlGroup: String?
        /// The links not tracked (`ignore`), in file order: by default what container runtimes
        /// create (``LinkIgnoreList/containerDefaults``). ``Configuration/linkIgnoreList`` adds
        /// the names the rest of the file keeps.
        package var ignore: [LinkIgnoreList.Entry] = LinkIgnoreList.containerDefaults

        /// The default agent settings (docs/configuration.md).
        public init(
            hooksDirectory: String = "/etc/netpath/hooks.d",
            hookTimeout: Duration = .seconds(30),
            maxRunningHooks: Int = 8,
            settle: Duration = .zero,
            startupEvents: Bool = true,
            controlSocket: String = "/run/netpath/netpathd.sock",
            metrics: String = "",
            controlGroup: String? = nil
        ) {
            self.hooksDirectory = hooksDirectory
            self.hookTimeout = hookTimeout
            self.maxRunningHooks = maxRunningHooks
            self.settle = settle
            self.startupEvents = startupEvents
            self.controlSocket = controlSocket
            self.metrics = metrics
            self.controlGroup = controlGroup
        }
    }

    /// The `[agent]` settings.
    public var agent: Agent
    /// The `[[hook_dir]]` tables, in file order: hook directories besides `hooks_dir`, each
    /// with its dialect.
    public var hookDirectories: [HookDirectorySetting]
    /// The `[[interface]]` classification overrides, in file order.
    public var interfaces: [InterfaceOverride]
    /// The `[[policy]]` tables, in file order; exactly ``PathPolicy/default`` when none are given.
    public var policies: [PathPolicy]
    /// The `[[rule]]` tables, in file order. Empty means dispatcher mode: every event goes to
    /// every hook.
    public var rules: [Rule]
    /// The `[connectivity]` table: how interfaces are probed for internet access; `nil` (no
    /// table, the default) probes nothing and every interface's connectivity stays `unknown`.
    package var connectivity: ConnectivitySettings?
    /// The `[plugin.NAME]` tables by plugin name, unvalidated: each plugin checks its own.
    public var plugins: [String: TOMLTable]
    /// What validation accepted but found suspicious, as `FILE:LINE:COL: warning: …`.
    public var warnings: [Diagnostic]

    /// Creates a configuration; an empty `policies` becomes `[PathPolicy.default]`.
    package init(
        agent: Agent = Agent(),
        hookDirectories: [HookDirectorySetting] = [],
        interfaces: [InterfaceOverride] = [],
        policies: [PathPolicy] = [],
        rules: [Rule] = [],
        plugins: [String: TOMLTable] = [:],
        warnings: [Diagnostic] = [],
        connectivity: ConnectivitySettings? = nil
    ) {
        self.agent = agent
        self.hookDirectories = hookDirectories
        self.interfaces = interfaces
        self.policies = policies.isEmpty ? [.default] : policies
        self.rules = rules
        self.plugins = plugins
        self.warnings = warnings
        self.connectivity = connectivity
    }

    /// Every hook directory: `hooks_dir` (dialect `netpath`) first, then the `[[hook_dir]]`
    /// tables in file order.
    public var allHookDirectories: [HookDirectorySetting] {
        [HookDirectorySetting(paths: [agent.hooksDirectory], dialect: .netpath)] + hookDirectories
    }

    /// No rules: every event goes to every hook in the hooks directory, like
    /// NetworkManager-dispatcher.
    public var isDispatcherMode: Bool { rules.isEmpty }

    /// What netpathd does not track: ``Agent/ignore``, except the links an administrator names
    /// as worth tracking elsewhere in the file: an `[[interface]]`'s `match`, and a rule's
    /// `interface` unless it is `"*"` (every link).
    package var linkIgnoreList: LinkIgnoreList {
        let named = interfaces.map(\.match) + rules.compactMap(\.interface).filter { $0.pattern != "*" }
        return LinkIgnoreList(entries: agent.ignore, kept: named)
    }

    /// The policy called `name`, if any.
    public func policy(named name: String) -> PathPolicy? {
        policies.first { $0.name == name }
    }
}
