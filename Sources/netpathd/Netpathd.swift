// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import Metrics
import NetPathAgent
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathPlugin
import NetPathProbe
import Prometheus
import ServiceLifecycle
import ShippedPlugins
import UnixSignals

/// `netpathd`: the netpath agent. The process starts in `EntryPoint` (EntryPoint.swift).
struct Netpathd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpathd",
        abstract:
            "The netpath agent: follows links, addresses and routes, evaluates policies and rules, and runs hooks and plugins on every transition.",
        discussion: """
            Runs in the foreground (systemd Type=notify). SIGHUP reloads the configuration (an invalid \
            one is rejected and the old one stays); SIGTERM and SIGINT stop after dispatching the events \
            settle holds and letting queued and running hooks finish (or time out). Without --config, \
            reads \(ConfigurationFile.defaultPath) if it exists, else the embedded default (see \
            `netpathctl check-config`).
            """,
        version: NetPathVersion.current
    )

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "FILE"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "LEVEL")
    )
    var logLevel: Logger.Level = .info

    @Option(
        name: .long,
        help: ArgumentHelp("Write every observed state to FILE, for `netpathctl simulate`.", valueName: "FILE")
    )
    var record: String?

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree used for classification.", valueName: "DIR"))
    var sysfsRoot = "/sys"

    @Option(
        name: .long,
        help: ArgumentHelp("Serve the control socket here instead of the configured path.", valueName: "PATH")
    )
    var controlSocket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Follow the links, addresses and routes of this named network namespace (/run/netns/NAME) instead of our own; hooks and the control socket stay in ours.",
            valueName: "NAME"
        )
    )
    var namespace: String?

    func run() async throws {
        let level = logLevel
        let environment = ProcessInfo.processInfo.environment
        // Under systemd, stderr goes to the journal: lines then carry <N> priority prefixes.
        LoggingSystem.bootstrap { label in
            JournalLogHandler.standardError(label: label, logLevel: level)
        }
        let logger = Logger(label: "netpathd")
        let agent: Agent
        do {
            agent = try Agent(
                options: AgentOptions(
                    configPath: config,
                    recordPath: record,
                    sysfsRoot: sysfsRoot,
                    namespace: namespace,
                    environment: environment,
                    controlSocketPath: controlSocket,
                    logger: logger,
                    // Made when [connectivity] is first in force: the sandboxed helper
                    // (docs/probe-helper.md), found next to netpathd or in libexec.
                    connectivityProber: { SandboxedProbe() }
                ),
                plugins: .shipped
            )
        } catch {
            let message = "\(error)\nnetpathd: not started: \(error.summary)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            throw ExitCode(1)
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: agent.metricsRegistry))

        let reloads = Task {
            for await _ in await UnixSignalsSequence(trapping: .sighup) { agent.reload() }
        }
        defer { reloads.cancel() }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: agent)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            logger.critical("netpathd stopped: \(error)")
            throw ExitCode(1)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
