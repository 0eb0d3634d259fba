import EventLogPlugin
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathPlugin
import RouteMetricsPlugin

extension PluginRegistry {
    /// The plugins under `Plugins/`, built into netpathd: netpathctl knows them to validate their
    /// names in rules and their `[plugin.NAME]` tables exactly as the agent does.
    static var shipped: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(RouteMetricsPlugin.self)
        registry.register(EventLogPlugin.self)
        return registry
    }
}
