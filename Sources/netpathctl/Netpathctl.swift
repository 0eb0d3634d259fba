import ArgumentParser
import NetPath
import NetPathLinux

/// `netpathctl`: inspect and control netpath.
@main
struct Netpathctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpathctl",
        abstract: "Inspect the network path and control the netpath agent.",
        discussion: """
            status, monitor and explain ask the running netpathd over its control socket; with
            --local they compute the answer from the kernel directly, without an agent.
            """,
        version: "0.1.0",
        subcommands: [Status.self, Monitor.self, Explain.self, CheckConfig.self, Simulate.self]
    )
}

/// Options shared by the commands that can work without the agent.
struct SourceOptions: ParsableArguments {
    @Flag(name: .long, help: "Compute from the kernel directly instead of asking netpathd.")
    var local = false

    @Option(name: .long, help: ArgumentHelp("The agent's control socket.", valueName: "PATH"))
    var socket = "/run/netpath/netpathd.sock"

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree used for classification (with --local).", valueName: "DIR"))
    var sysfsRoot = "/sys"

    /// Fails with a clear message until the agent's control socket exists.
    func requireLocal() throws {
        guard local else {
            throw ValidationError(
                "no netpathd is answering on \(socket) (the agent's control socket is not available); use --local to compute from the kernel directly"
            )
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
        switch ConfigurationFile.load(path: config) {
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
            builder: SystemStateBuilder(
                classifier: InterfaceClassifier(overrides: configuration.interfaces),
                sysfs: SysfsReader(root: sysfsRoot)
            ),
            targets: configuration.policies.compactMap(\.target)
        )
    }

    /// The current state of this host's kernel, read once.
    func currentState(for configuration: Configuration) async throws -> SystemUpdate {
        let observer = observer(for: configuration)
        defer { observer.stop() }
        var updates = try observer.start().makeAsyncIterator()
        guard let update = await updates.next() else {
            throw ValidationError("the netlink engine stopped before its first dump")
        }
        return update
    }
}
