// SPDX-License-Identifier: Apache-2.0
// What `import NetPath` gives a program: the path model (NetPathCore's public types; what only
// the package uses there is `package`), the monitors and sources (this module), and the plugin
// protocol with what it takes and returns. The rest of the package (the TOML parser, the control
// client, traces, hooks, the netlink engine, the plugin registry) shares its API with `package`
// access or stays in modules that are not re-exported.
@_exported import NetPathCore

// What a plugin's configuration reports and throws: each problem as a diagnostic with its place.
@_exported import struct NetPathConfig.ConfigurationErrors
@_exported import struct NetPathConfig.Diagnostic
@_exported import struct NetPathConfig.SourceLocation
// What a KernelPathSource's monitor reports as its failure when netlink fails.
@_exported import struct NetPathLinux.NetlinkError
// The plugin protocol: what a plugin implements, what it is given (context, configuration,
// capabilities) and what it throws.
@_exported import protocol NetPathPlugin.Plugin
@_exported import struct NetPathPlugin.PluginCapability
@_exported import struct NetPathPlugin.PluginConfiguration
@_exported import struct NetPathPlugin.PluginContext
@_exported import struct NetPathPlugin.PluginError
