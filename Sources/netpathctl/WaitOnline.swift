// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import NetPathConfig
import NetPathControl
import NetPathCore

extension Netpathctl {
    /// `netpathctl wait-online`: what `netpath-wait-online.service` runs before
    /// `network-online.target`.
    struct WaitOnline: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "wait-online",
            abstract: "Wait until netpathd reports the network online (netpath-wait-online.service).",
            discussion: """
                Online means, by default, that some policy of netpathd's configuration is satisfied. Every option narrows it: --policy names the policies that must be (all of them, or one with --any), --connectivity asks their paths for a probe's verdict, -4, -6 and --dns for IPv4, IPv6 and a DNS server; -i and -o, as systemd-networkd-wait-online has them, ask interfaces for an operational state (networkctl(1)'s names: off, no-carrier, dormant, carrier, degraded, routable). It follows netpathd's event stream and never polls; while no netpathd answers (not started yet, restarting) it waits for the control socket to appear. Exit status: 0 once online; 1 when not online within --timeout, with the reason on stderr; 2 on any other error (a bad option, no netpathd within the timeout, a policy netpathd does not have, --connectivity without [connectivity]).
                """
        )

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The agent's control socket (default: the control_socket of --config's file, else of the default configuration).",
                valueName: "PATH"
            )
        )
        var socket: String?

        @OptionGroup var config: ConfigOptions

        @Option(
            name: .customLong("policy"),
            help: ArgumentHelp(
                "A policy that must be satisfied; repeat for several (all of them must be, or one with --any). Default: any policy.",
                valueName: "NAME"
            )
        )
        var policies: [String] = []

        @Flag(help: "One of the --policy policies (and of the -i interfaces) suffices.")
        var any = false

        @Option(
            help: ArgumentHelp(
                "The paths must also have this connectivity or better, as probed (limited, portal or full); needs [connectivity] in netpathd's configuration.",
                valueName: "STATE"
            )
        )
        var connectivity: String?

        @Option(
            name: [.customShort("i"), .customLong("interface")],
            help: ArgumentHelp(
                "An interface that must be within an operational state range (default: -o's, else degraded:routable); repeat for several (all, or one with --any).",
                valueName: "IFACE[:MIN[:MAX]]"
            )
        )
        var interfaces: [String] = []

        @Option(
            name: .customLong("ignore"),
            help: ArgumentHelp(
                "An interface (a glob) that -o without -i does not count; repeatable.",
                valueName: "IFACE"
            )
        )
        var ignored: [String] = []

        @Option(
            name: [.customShort("o"), .customLong("operational-state")],
            help: ArgumentHelp(
                "The operational state range for -i's interfaces; without -i, at least one interface other than loopback (and --ignore's) must be within it.",
                valueName: "MIN[:MAX]"
            )
        )
        var operationalState: String?

        @Flag(
            name: [.customShort("4"), .customLong("ipv4")],
            help: "Wait for IPv4 (on the paths, and on -i's interfaces)."
        )
        var ipv4 = false

        @Flag(
            name: [.customShort("6"), .customLong("ipv6")],
            help: "Wait for IPv6 (on the paths, and on -i's interfaces)."
        )
        var ipv6 = false

        @Flag(help: "Wait until the paths have a reachable DNS server (resolv.conf's).")
        var dns = false

        @Option(
            help: ArgumentHelp(
                "How long to wait: seconds, or a duration like 90s or 2m; 0 waits forever.",
                valueName: "SECS"
            )
        )
        var timeout: String = "120"

        @Flag(name: [.customShort("q"), .long], help: "Print nothing on success or timeout (errors still are).")
        var quiet = false

        /// The options as a condition; a bad one is a ValidationError (exit 2, EntryPoint).
        func condition() throws -> OnlineCondition {
            var condition = OnlineCondition()
            condition.policies = policies
            condition.any = any
            condition.ipv4 = ipv4
            condition.ipv6 = ipv6
            condition.dns = dns
            do {
                condition.interfaces = try interfaces.map { try OnlineCondition.InterfaceRequirement(parsing: $0) }
                condition.operationalState = try operationalState.map {
                    try OnlineCondition.OperationalRange(parsing: Substring($0))
                }
            } catch {
                throw ValidationError("\(error)")
            }
            condition.ignored = try ignored.map { pattern in
                do { return try Glob(pattern) } catch { throw ValidationError("--ignore: \(error)") }
            }
            if let connectivity {
                guard let state = Connectivity(rawValue: connectivity), [.limited, .portal, .full].contains(state)
                else {
                    throw ValidationError("--connectivity: \"\(connectivity)\" is not limited, portal or full")
                }
                condition.connectivity = state
            }
            return condition
        }

        /// `--timeout` as a duration; `nil` for 0 (forever).
        func waitLimit() throws -> Duration? {
            let limit: Duration
            if let seconds = UInt32(timeout) {
                limit = .seconds(seconds)
            } else {
                do { limit = try Duration(configuration: timeout) } catch {
                    throw ValidationError(
                        "--timeout: \"\(timeout)\" is neither a number of seconds nor a duration like 90s or 2m"
                    )
                }
            }
            return limit == .zero ? nil : limit
        }

        func validate() throws {
            _ = try condition()
            _ = try waitLimit()
            if socket != nil && config.config != nil {
                throw ValidationError("--socket and --config exclude each other: both say where the agent's socket is")
            }
        }

        func run() throws {
            let condition = try condition()
            let limit = try waitLimit()
            let path =
                try socket
                ?? (config.config != nil
                    ? config.load().configuration.agent.controlSocket : SourceOptions.defaultSocketPath)
            var wait = OnlineWait(condition: condition, socketPath: path, limit: limit)
            if !quiet { wait.progress = { FileOutput.write("netpathctl wait-online: \($0)\n", to: 2) } }
            let outcome = wait.run()
            switch outcome {
            case .online(let text):
                if !quiet { FileOutput.write("online: \(text)\n") }
                throw ExitCode(0)
            case .timedOut(let reason):
                if !quiet { FileOutput.write("netpathctl wait-online: \(reason)\n", to: 2) }
                throw ExitCode(1)
            case .failed(let reason):
                FileOutput.write("netpathctl wait-online: \(reason)\n", to: 2)
                throw ExitCode(2)
            }
        }
    }
}
