// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathCore

/// The plugin types a program knows, by name: what `[plugin.NAME]` tables and rules may name.
///
/// `PluginRegistry.shipped` registers the plugins under `Plugins/` and netpathd hands it to the
/// agent, which creates the plugins its configuration enables, each from its own `[plugin.NAME]`
/// table; package access, because nothing outside the package can run the agent:
///
/// ```swift
/// var registry = PluginRegistry()
/// registry.register(PrimaryAnnouncer.self)
/// registry.register(name: "audit") { event, context in context.logger.info("\(event.name)") }
/// ```
package struct PluginRegistry: Sendable {
    /// How to make one registered plugin.
    package struct Entry: Sendable {
        package var name: String
        package var capabilities: Set<PluginCapability>
        package var receivesObsoleteEvents: Bool
        /// Creates an instance from its table; throws its configuration errors.
        package var make: @Sendable (PluginConfiguration) throws -> any Plugin
    }

    private var entries: [String: Entry] = [:]
    /// Registration order: start order (stop runs in reverse), like ConnMan's priorities.
    private var order: [String] = []

    /// An empty registry.
    package init() {}

    /// Registers `type` under ``Plugin/name``.
    ///
    /// - Important: Names are unique; registering a second type under a taken name replaces the first.
    package mutating func register<P: Plugin>(_ type: P.Type) {
        add(
            Entry(name: P.name, capabilities: P.capabilities, receivesObsoleteEvents: P.receivesObsoleteEvents) {
                try P(configuration: $0)
            }
        )
    }

    /// Registers a plugin made by `make` under `name`: for closure plugins, or plugins that need
    /// values the configuration cannot give (a database handle, a test's recorder).
    package mutating func register(
        name: String,
        capabilities: Set<PluginCapability> = [],
        receivesObsoleteEvents: Bool = false,
        make: @escaping @Sendable (PluginConfiguration) throws -> any Plugin
    ) {
        add(Entry(name: name, capabilities: capabilities, receivesObsoleteEvents: receivesObsoleteEvents, make: make))
    }

    /// Registers a ``ClosurePlugin`` that calls `handler` for each event.
    package mutating func register(
        name: String,
        capabilities: Set<PluginCapability> = [],
        receivesObsoleteEvents: Bool = false,
        handler: @escaping @Sendable (Event, PluginContext) async throws -> Void
    ) {
        register(name: name, capabilities: capabilities, receivesObsoleteEvents: receivesObsoleteEvents) { _ in
            ClosurePlugin(handler: handler)
        }
    }

    /// The registered names: pass them to `ConfigurationLoader.load(contents:file:knownPlugins:)`.
    package var knownPlugins: Set<String> { Set(order) }

    /// The entry registered under `name`.
    package func entry(named name: String) -> Entry? { entries[name] }

    /// The names of the plugins `configuration` enables, in registration order: those its rules
    /// name, or, with no rules (dispatcher mode), those with a `[plugin.NAME]` table.
    package func enabledNames(in configuration: Configuration) -> [String] {
        let wanted =
            configuration.isDispatcherMode
            ? Set(configuration.plugins.keys) : Set(configuration.rules.flatMap(\.plugins))
        return order.filter { wanted.contains($0) }
    }

    /// Creates every enabled plugin from its table, and validates the tables of configured
    /// plugins that no rule enables, so that every plugin error is reported.
    ///
    /// - Returns: the plugins, or every diagnostic, in file order.
    package func makePlugins(for configuration: Configuration, file: String) -> Result<
        [LoadedPlugin], ConfigurationErrors
    > {
        var plugins: [LoadedPlugin] = []
        var errors: [Diagnostic] = []
        let enabled = enabledNames(in: configuration)
        for name in order where enabled.contains(name) || configuration.plugins[name] != nil {
            guard let entry = entries[name] else { continue }
            let settings = PluginConfiguration(
                name: name,
                table: configuration.plugins[name],
                file: file,
                fallback: configuration.rules.first { $0.plugins.contains(name) }?.location
                    ?? SourceLocation(line: 1, column: 1)
            )
            do {
                let plugin = try entry.make(settings)
                if enabled.contains(name) {
                    plugins.append(LoadedPlugin(entry: entry, configuration: settings, plugin: plugin))
                }
            } catch let error as ConfigurationErrors {
                errors += error.errors
            } catch {
                errors.append(
                    Diagnostic(file: file, at: settings.location, message: "plugin \(TOMLValue.quoted(name)): \(error)")
                )
            }
        }
        guard errors.isEmpty else {
            return .failure(ConfigurationErrors(errors: errors.sorted { ($0.line, $0.column) < ($1.line, $1.column) }))
        }
        return .success(plugins)
    }

    private mutating func add(_ entry: Entry) {
        if entries.updateValue(entry, forKey: entry.name) == nil { order.append(entry.name) }
    }
}

/// One plugin instance, created from its table and ready for a `PluginRunner`.
package struct LoadedPlugin: Sendable {
    package var name: String
    package var capabilities: Set<PluginCapability>
    package var receivesObsoleteEvents: Bool
    /// The table it was created from: a reload compares it to decide whether anything changed.
    package var configuration: PluginConfiguration
    package var plugin: any Plugin

    /// A plugin with the name, capabilities and queueing of its registry entry.
    package init(entry: PluginRegistry.Entry, configuration: PluginConfiguration, plugin: any Plugin) {
        self.name = entry.name
        self.capabilities = entry.capabilities
        self.receivesObsoleteEvents = entry.receivesObsoleteEvents
        self.configuration = configuration
        self.plugin = plugin
    }

    /// An instance of `P`, outside any registry (tests, embedding programs).
    package init<P: Plugin>(_ plugin: P, configuration: PluginConfiguration? = nil) {
        self.name = P.name
        self.capabilities = P.capabilities
        self.receivesObsoleteEvents = P.receivesObsoleteEvents
        self.configuration = configuration ?? PluginConfiguration(name: P.name, table: nil, file: "")
        self.plugin = plugin
    }

    /// Any plugin under `name` (closure plugins).
    package init(
        name: String,
        capabilities: Set<PluginCapability> = [],
        receivesObsoleteEvents: Bool = false,
        plugin: any Plugin
    ) {
        self.name = name
        self.capabilities = capabilities
        self.receivesObsoleteEvents = receivesObsoleteEvents
        self.configuration = PluginConfiguration(name: name, table: nil, file: "")
        self.plugin = plugin
    }
}
