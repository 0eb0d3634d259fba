// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// An in-process event handler of the agent: the Swift counterpart of a hook.
///
/// A plugin has a name, is created from its own `[plugin.NAME]` configuration table, receives
/// typed ``Event``s (each carrying the path or interface state it concerns), may
/// keep state, and acts on the system only through the narrow ``PluginContext`` it is handed.
///
/// ## Implementing a plugin
///
/// Give the type a ``name``, validate the table in ``init(configuration:)`` (every problem
/// becomes a `FILE:LINE:COL: error:` line, like any other configuration error), and implement
/// ``handle(_:context:)``. Every other requirement has a default. Keep mutable state in an actor
/// or behind a `Mutex`: calls for different interfaces and policies may run concurrently.
///
/// ```swift
/// import NetPath
/// import Synchronization
///
/// /// Counts how often each policy lost its path, and says so.
/// struct OutageCounter: Plugin {
///     static let name = "outage-counter"
///
///     let threshold: Int64
///     let outages = Mutex<[String: Int64]>([:])
///
///     init(configuration: PluginConfiguration) throws {
///         var settings = configuration           // [plugin.outage-counter]
///         threshold = settings.integer("warn_after", in: 1...1000) ?? 3
///         try settings.finish()                  // unknown keys and bad values, with their lines
///     }
///
///     func handle(_ event: Event, context: PluginContext) async throws {
///         guard event.scope == .path, event.name == .unsatisfied, let policy = event.policy else { return }
///         let count = outages.withLock { $0[policy, default: 0] += 1; return $0[policy]! }
///         if count >= threshold {
///             context.logger.warning("policy \(policy) lost its path \(count) times")
///         }
///     }
/// }
/// ```
///
/// netpathd runs the plugins it is built with: a new one is a target under `Plugins/`, registered
/// in `Plugins/Shipped/ShippedPlugins.swift` (docs/plugins.md). The plugin is enabled by a `[plugin.outage-counter]` table and by naming it in a rule's
/// `plugins = [...]`; it then receives the events that rule matches.
///
/// ## What the agent guarantees
///
/// - Calls for one subject (one interface, one policy) never overlap and
///   arrive in the order the events happened; calls for different subjects may run concurrently.
/// - Each call has a timeout. A call that throws, is slow or never returns is logged and counted,
///   and delays only later events of its own subject; other subjects, other plugins, hooks and
///   the agent carry on. On timeout the call's task is cancelled.
/// - An event still queued when a newer one of its subject makes it obsolete (`up` then `down`)
///   may be dropped, unless ``receivesObsoleteEvents`` is `true`; the newest is always delivered.
///
/// - Important: Never block a thread (no `sleep`, no blocking reads of pipes or sockets): the
///   agent's cooperative thread pool is small, and a blocked thread cannot be timed out. Await,
///   or hand blocking work to a thread of your own.
public protocol Plugin: Sendable {
    /// The name used in `[plugin.NAME]` and in a rule's `plugins`.
    static var name: String { get }

    /// What the plugin needs beyond a logger and read access to the state; default none.
    static var capabilities: Set<PluginCapability> { get }

    /// Whether every event is delivered even when a newer one of its subject made it obsolete
    /// while it waited (a log wants every line; an enforcer only the latest state). Default `false`.
    static var receivesObsoleteEvents: Bool { get }

    /// Creates the plugin from its `[plugin.NAME]` table (empty when the configuration has none).
    ///
    /// Validate everything here and report problems through ``PluginConfiguration``; do no I/O
    /// (the agent also creates plugins just to check a configuration). Open files in
    /// ``start(context:)``.
    init(configuration: PluginConfiguration) throws

    /// Handles one event: the main requirement.
    func handle(_ event: Event, context: PluginContext) async throws

    /// Called once before the first event, with the current state in `context`. Default: nothing.
    func start(context: PluginContext) async throws

    /// Called once when the agent stops or the plugin is disabled by a reload; undo here what
    /// should not outlive the agent. Default: nothing.
    func stop(context: PluginContext) async throws

    /// Called when a reload changed this plugin's table. Return `true` when the plugin adopted
    /// the new settings itself; `false` (the default) has the agent stop this instance and start
    /// one created from `configuration`.
    func reload(configuration: PluginConfiguration, context: PluginContext) async throws -> Bool

    /// Called on SIGHUP (log rotation): reopen files the plugin writes. Default: nothing.
    func reopen(context: PluginContext) async throws
}

extension Plugin {
    public static var capabilities: Set<PluginCapability> { [] }
    public static var receivesObsoleteEvents: Bool { false }
    public func start(context: PluginContext) async throws {}
    public func stop(context: PluginContext) async throws {}
    public func reload(configuration: PluginConfiguration, context: PluginContext) async throws -> Bool { false }
    public func reopen(context: PluginContext) async throws {}
}

/// A plugin made of closures, for small in-code handlers and tests.
///
/// Register it under a name with ``PluginRegistry/register(name:capabilities:receivesObsoleteEvents:handler:)``,
/// which gives each instance its closure:
///
/// ```swift
/// registry.register(name: "audit") { event, context in
///     context.logger.info("\(event.name) \(event.subject)")
/// }
/// ```
///
/// Created from a configuration table alone (``init(configuration:)``) it ignores every event.
package struct ClosurePlugin: Plugin {
    /// The placeholder type name; a closure plugin runs under the name it was registered with.
    package static var name: String { "closure" }

    private let handler: @Sendable (Event, PluginContext) async throws -> Void
    private let onStart: @Sendable (PluginContext) async throws -> Void
    private let onStop: @Sendable (PluginContext) async throws -> Void

    /// Creates a plugin that calls `handler` for each event, and `start` and `stop` around them.
    package init(
        start: @escaping @Sendable (PluginContext) async throws -> Void = { _ in },
        stop: @escaping @Sendable (PluginContext) async throws -> Void = { _ in },
        handler: @escaping @Sendable (Event, PluginContext) async throws -> Void
    ) {
        self.handler = handler
        self.onStart = start
        self.onStop = stop
    }

    /// A plugin that ignores every event.
    package init(configuration: PluginConfiguration) {
        self.init { _, _ in }
    }

    package func handle(_ event: Event, context: PluginContext) async throws {
        try await handler(event, context)
    }

    package func start(context: PluginContext) async throws { try await onStart(context) }
    package func stop(context: PluginContext) async throws { try await onStop(context) }
}
