import EventLogPlugin
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathPlugin
import RouteMetricsPlugin

extension PluginRegistry {
    /// The plugins under `Plugins/`, built into netpathd and enabled by name in the configuration.
    static var shipped: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(RouteMetricsPlugin.self)
        registry.register(EventLogPlugin.self)
        return registry
    }
}
