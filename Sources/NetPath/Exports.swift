// What `import NetPath` gives a program: the path model (NetPathCore), the monitors and sources
// (this module), and the plugin protocol with what it takes and returns. The rest of the package
// (the TOML parser, the control client, traces, hooks) shares its API with `package` access or
// stays in modules that are not re-exported.
@_exported import NetPathCore

// What a plugin's configuration reports and throws: each problem as a diagnostic with its place.
@_exported import struct NetPathConfig.ConfigurationErrors
@_exported import struct NetPathConfig.Diagnostic
@_exported import struct NetPathConfig.SourceLocation
@_exported import class NetPathLinux.NetlinkEngine
@_exported import struct NetPathLinux.NetlinkError
@_exported import struct NetPathLinux.SysfsReader
// What KernelPathSource's initialiser takes: custom classification (a builder with overrides or a
// sysfs fixture) and a namespace, and the error it throws. NetPathLinux is not a product, so a
// program could not import it to name them; the rest of that module stays out of the API.
@_exported import struct NetPathLinux.SystemStateBuilder
// The plugin protocol: what a plugin implements, what it is given (context, configuration,
// capabilities), what it throws, and how a program registers it with an embedded agent.
@_exported import struct NetPathPlugin.ClosurePlugin
@_exported import protocol NetPathPlugin.Plugin
@_exported import struct NetPathPlugin.PluginCapability
@_exported import struct NetPathPlugin.PluginConfiguration
@_exported import struct NetPathPlugin.PluginContext
@_exported import struct NetPathPlugin.PluginError
@_exported import struct NetPathPlugin.PluginRegistry
@_exported import class NetPathPlugin.PluginStateView
