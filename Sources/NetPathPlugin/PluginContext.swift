// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathCore
import Synchronization

/// What a plugin may use: a logger, read access to the current state and paths, and the
/// capabilities it declared.
///
/// The context is a small value; the state it reads is the agent's latest, so a plugin that
/// keeps the context sees updates. The state in an ``Event`` is the state the event
/// concerns; ``state`` and ``paths`` are the newest the agent knows, which may be later.
public struct PluginContext: Sendable {
    /// The plugin's name.
    public let pluginName: String
    /// The plugin's logger (metadata `plugin=NAME`).
    public let logger: Logger
    private let view: PluginStateView
    private let granted: Set<PluginCapability>
    private let editor: (any RouteEditor)?

    /// A context that reads `state` and `paths`, for testing a plugin directly.
    ///
    /// ```swift
    /// let context = PluginContext(pluginName: "audit", logger: Logger(label: "test"), state: state)
    /// try await plugin.handle(event, context: context)
    /// ```
    ///
    /// - Parameters:
    ///   - pluginName: The plugin's name.
    ///   - logger: Its logger.
    ///   - state: What ``state`` returns.
    ///   - paths: What ``paths`` returns.
    ///   - capabilities: The capabilities granted.
    ///   - routeEditor: The editor behind ``PluginCapability/routeEditing``, if any.
    public init(
        pluginName: String,
        logger: Logger,
        state: SystemState = SystemState(),
        paths: [NetworkPath] = [],
        capabilities: Set<PluginCapability> = [],
        routeEditor: (any RouteEditor)? = nil
    ) {
        self.init(
            pluginName: pluginName,
            logger: logger,
            view: PluginStateView(state: state, paths: paths),
            capabilities: capabilities,
            routeEditor: routeEditor
        )
    }

    /// A context that reads the agent's shared view, which the agent updates before each change's events.
    package init(
        pluginName: String,
        logger: Logger,
        view: PluginStateView,
        capabilities: Set<PluginCapability> = [],
        routeEditor: (any RouteEditor)? = nil
    ) {
        self.pluginName = pluginName
        var logger = logger
        logger[metadataKey: "plugin"] = .string(pluginName)
        self.logger = logger
        self.view = view
        self.granted = capabilities
        self.editor = routeEditor
    }

    /// The current system state: interfaces, DNS servers, target reachability.
    public var state: SystemState { view.current.state }

    /// The current path of every policy, in configuration order.
    public var paths: [NetworkPath] { view.current.paths }

    /// The current path of `policy`, if the agent evaluates it.
    public func path(forPolicy policy: String) -> NetworkPath? {
        paths.first { $0.policy == policy }
    }

    /// The route editor, for plugins that declared ``PluginCapability/routeEditing``.
    ///
    /// - Throws: ``PluginError`` ``PluginError/Code/capabilityNotGranted`` when the plugin did
    ///   not declare the capability, ``PluginError/Code/capabilityUnavailable`` when the agent has
    ///   no editor to give.
    public func routeEditor() throws(PluginError) -> any RouteEditor {
        guard granted.contains(.routeEditing) else {
            throw PluginError(
                .capabilityNotGranted,
                plugin: pluginName,
                context: "route editing (declare it in capabilities)"
            )
        }
        guard let editor else {
            throw PluginError(.capabilityUnavailable, plugin: pluginName, context: "the agent has no route editor")
        }
        return editor
    }
}

/// The state and paths plugins read: one shared, locked value the agent updates after each
/// change, before delivering the change's events.
package final class PluginStateView: Sendable {
    /// One consistent reading.
    package struct Current: Hashable, Sendable {
        /// The system state.
        package var state: SystemState
        /// Every policy's path, in configuration order.
        package var paths: [NetworkPath]

        /// A reading of `state` and `paths`.
        package init(state: SystemState = SystemState(), paths: [NetworkPath] = []) {
            self.state = state
            self.paths = paths
        }
    }

    private let value: Mutex<Current>

    /// A view that holds `state` and `paths` until ``update(state:paths:)``.
    package init(state: SystemState = SystemState(), paths: [NetworkPath] = []) {
        value = Mutex(Current(state: state, paths: paths))
    }

    /// The latest state and paths.
    package var current: Current { value.withLock { $0 } }

    /// Replaces the state and paths.
    package func update(state: SystemState, paths: [NetworkPath]) {
        value.withLock { $0 = Current(state: state, paths: paths) }
    }
}
