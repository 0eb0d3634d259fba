// SPDX-License-Identifier: Apache-2.0

import EventLogPlugin
import NetPathConfig
import NetPathCore
import NetPathPlugin
import RouteMetricsPlugin
import Testing

/// Registration by name, and plugin configuration errors reported like every other config error.
struct PluginRegistryTests {
    static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(RouteMetricsPlugin.self)
        registry.register(EventLogPlugin.self)
        registry.register(name: "audit") { _, _ in }
        return registry
    }

    @Test("registered names are the known plugins; a rule naming another one is an error with its line")
    func unknownPluginInRule() {
        #expect(Self.registry.knownPlugins == ["route-metrics", "event-log", "audit"])
        let text = """
            [[rule]]
            name = "r"
            on = ["up"]
            plugins = ["event-logg"]
            """
        let result = ConfigurationLoader.load(
            contents: text,
            file: "netpath.toml",
            knownPlugins: Self.registry.knownPlugins
        )
        guard case .failure(let errors) = result else {
            Issue.record("loaded a rule naming an unknown plugin")
            return
        }
        #expect(errors.errors.map(\.line) == [4])
        #expect(errors.description.contains("unknown plugin \"event-logg\"; did you mean \"event-log\"?"))
    }

    @Test("every problem in the plugin tables is reported at once, each with its line and column")
    func pluginErrorsNameTheirLines() {
        let text = """
            [plugin.event-log]
            path = 7
            colour = "red"

            [plugin.route-metrics]
            metrics = { wired = -5, wify = 600 }

            [[rule]]
            name = "r"
            on = ["up"]
            plugins = ["event-log", "route-metrics"]
            """
        guard
            case .success(let configuration) = ConfigurationLoader.load(
                contents: text,
                file: "netpath.toml",
                knownPlugins: Self.registry.knownPlugins
            )
        else {
            Issue.record("the file itself is valid")
            return
        }
        guard case .failure(let errors) = Self.registry.makePlugins(for: configuration, file: "netpath.toml") else {
            Issue.record("invalid plugin tables were accepted")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(
            lines == [
                "netpath.toml:2:8: error: plugin.event-log.path must be a string, found integer 7",
                "netpath.toml:3:1: error: unknown key \"colour\" in [plugin.event-log]; expected one of \"path\"",
                "netpath.toml:6:21: error: plugin.route-metrics.metrics.wired must be between 0 and 4294966271, found -5",
                "netpath.toml:6:25: error: unknown key \"wify\" in [plugin.route-metrics.metrics]; did you mean \"wifi\"?",
            ],
            "\(lines)"
        )
    }

    @Test("the enabled plugins are those the rules name, created in registration order")
    func enabledPlugins() throws {
        let text = """
            [plugin.event-log]
            path = "/tmp/np-never-opened.jsonl"

            [[rule]]
            name = "r"
            on = ["up"]
            plugins = ["audit", "event-log"]
            """
        let configuration = try ConfigurationLoader.load(
            contents: text,
            file: "netpath.toml",
            knownPlugins: Self.registry.knownPlugins
        ).get()
        let plugins = try Self.registry.makePlugins(for: configuration, file: "netpath.toml").get()
        #expect(plugins.map(\.name) == ["event-log", "audit"])
        #expect(plugins[0].receivesObsoleteEvents)
        #expect(!plugins[1].receivesObsoleteEvents)
    }
}
