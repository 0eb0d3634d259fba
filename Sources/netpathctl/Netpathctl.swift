// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathLinux
import NetPathPlugin
import ShippedPlugins

/// `netpathctl`: inspect and control netpath. The process starts in `EntryPoint` (EntryPoint.swift).
struct Netpathctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpathctl",
        abstract: "Inspect the network path and control the netpath agent.",
        discussion: """
            status, monitor, explain and hooks ask the running netpathd over its control socket; with --local they compute the answer from the kernel directly, without an agent. check-config and simulate never need the agent.
            """,
        version: NetPathVersion.current,
        subcommands: [
            Status.self, Monitor.self, Explain.self, Hooks.self, Reload.self, CheckConfig.self, Simulate.self,
            Probe.self, WaitOnline.self,
        ]
    )
}

/// Options shared by the commands that can work without the agent.
struct SourceOptions: ParsableArguments {
    @Flag(name: .long, help: "Compute from the kernel directly instead of asking netpathd.")
    var local = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The agent's control socket (default: the control_socket of --config's file, else of the default configuration).",
            valueName: "PATH"
        )
    )
    var socket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Root of the sysfs tree used for classification (with --local; default: /sys).",
            valueName: "DIR"
        )
    )
    var sysfsRoot: String?

    func validate() throws {
        // The agent classifies with its own sysfs tree (netpathd --sysfs-root): silently
        // ignoring this one would show the agent's answer as if it were computed from DIR.
        if sysfsRoot != nil && !local {
            throw ValidationError("--sysfs-root applies only with --local: netpathd classifies with its own tree")
        }
        if socket != nil && local {
            throw ValidationError("--socket and --local exclude each other: --local does not ask the agent")
        }
    }

    /// The agent's control socket: `--socket`, else the `control_socket` of the `--config` file
    /// (whose errors, when it has any, are printed and end the command), else the default's.
    func socketPath(_ config: ConfigOptions) throws -> String {
        if let socket { return socket }
        if config.config != nil { return try config.load().configuration.agent.controlSocket }
        return Self.defaultSocketPath
    }

    /// A connection to the running agent at ``socketPath(_:)``, or an error that suggests `--local`.
    func connect(_ config: ConfigOptions) throws -> ControlClient {
        try ControlClient(path: socketPath(config))
    }

    /// The default configuration's socket: /etc/netpath/netpath.toml's when it is valid, else the
    /// built-in default.
    static var defaultSocketPath: String {
        if case .success(let loaded) = ConfigurationFile.load(path: nil) {
            return loaded.configuration.agent.controlSocket
        }
        return Configuration.Agent().controlSocket
    }
}

extension ControlReply {
    /// The reply, or its error as a thrown failure (exit status 1).
    func checked() throws -> ControlReply {
        guard ok else { throw AgentError.refused(reason: error) }
        return self
    }
}

/// The agent answered, but not with what the command needs (exit status 1).
enum AgentError: Error, Equatable, CustomStringConvertible {
    /// The agent refused the request; `reason` is its `error`, when it gave one.
    case refused(reason: String?)
    /// The reply lacks its payload: `missing` names it (`"status"`, `"hook list"`).
    case incompleteReply(missing: String)
    /// The agent closed a `monitor` stream: it stopped or is restarting.
    case connectionClosed

    var description: String {
        switch self {
        case .refused(let reason): return reason ?? "the agent refused the request"
        case .incompleteReply(let missing): return "the agent sent no \(missing)"
        case .connectionClosed: return "netpathd closed the connection (stopped or restarting)"
        }
    }
}

/// `--config FILE`, shared by the commands that evaluate policies and rules.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file (default: \(ConfigurationFile.defaultPath) if it exists, else the embedded default).",
            valueName: "FILE"
        )
    )
    var config: String?

    /// The configuration, or exit 1 after printing its diagnostics as `FILE:LINE:COL: error: …`.
    func load() throws -> ConfigurationFile.Loaded {
        let plugins = PluginRegistry.shipped
        let result = ConfigurationFile.load(path: config, knownPlugins: plugins.knownPlugins).flatMap { loaded in
            // Plugin tables are validated by their plugins, as the agent does at start and reload.
            plugins.makePlugins(for: loaded.configuration, file: loaded.source).map { _ in loaded }.mapError {
                .invalid($0)
            }
        }
        switch result {
        case .success(let loaded):
            for warning in loaded.configuration.warnings { FileOutput.write("\(warning)\n", to: 2) }
            return loaded
        case .failure(let failure):
            FileOutput.write("\(failure)\n", to: 2)
            throw ExitCode(1)
        }
    }
}

extension SourceOptions {
    /// An observer of this host's kernel, classified and targeted as `configuration` says.
    func observer(for configuration: Configuration) -> SystemObserver {
        SystemObserver(
            engine: NetlinkEngine(
                options: .init(linkFilter: LinkFilter.following(configuration.linkIgnoreList, namespace: nil))
            ),
            builder: SystemStateBuilder(
                classifier: InterfaceClassifier(overrides: configuration.interfaces),
                sysfs: SysfsReader(root: sysfsRoot ?? "/sys")
            ),
            targets: configuration.policies.compactMap(\.target)
        )
    }

    /// The current state of this host's kernel, read once.
    func currentState(for configuration: Configuration) async throws -> SystemUpdate {
        try await currentReading(for: configuration).update
    }

    /// The current state, and the links `[agent] ignore` keeps out of it.
    func currentReading(for configuration: Configuration) async throws -> (
        update: SystemUpdate, ignored: [IgnoredInterface]
    ) {
        let observer = observer(for: configuration)
        defer { observer.stop() }
        var updates = try observer.start().makeAsyncIterator()
        guard let update = await updates.next() else {
            throw ValidationError("the netlink engine stopped before its first dump")
        }
        return (update, observer.engine.ignoredInterfaces())
    }
}
