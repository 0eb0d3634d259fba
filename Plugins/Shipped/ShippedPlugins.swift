// SPDX-License-Identifier: Apache-2.0

import EventLogPlugin
import NetPathPlugin
import RouteMetricsPlugin

extension PluginRegistry {
    /// The plugins under `Plugins/`, built into netpathd and enabled by name in the configuration.
    ///
    /// netpathctl registers the same ones, so `check-config` validates plugin names in rules and
    /// `[plugin.NAME]` tables exactly as the agent does.
    package static var shipped: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(RouteMetricsPlugin.self)
        registry.register(EventLogPlugin.self)
        return registry
    }
}
