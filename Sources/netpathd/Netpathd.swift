import ArgumentParser
import FoundationEssentials
import Logging
import NetPath
import NetPathLinux

/// `netpathd`: the netpath agent.
///
/// For now it follows the kernel and logs every interface and path event; rules, hooks, plugins
/// and the control socket arrive with their issues.
@main
struct Netpathd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpathd",
        abstract: "The netpath agent: follows links, addresses and routes and reports path changes.",
        version: "0.1.0"
    )

    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "LEVEL"))
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree used for classification.", valueName: "DIR"))
    var sysfsRoot = "/sys"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "netpathd")
        let observer = SystemObserver(
            engine: NetlinkEngine(options: .init(logger: Logger(label: "netpath.netlink"))),
            builder: SystemStateBuilder(sysfs: SysfsReader(root: sysfsRoot))
        )
        var tracker = PathTracker(policies: [.default])
        var started = false
        for await update in try observer.start() {
            let events =
                started ? tracker.update(to: update.state, at: update.time) : tracker.start(with: update.state, at: update.time)
            started = true
            for event in events {
                logger.info(
                    "\(event.scope.rawValue) \(event.name.rawValue)",
                    metadata: [
                        "interface": "\(event.interface ?? "")",
                        "policy": "\(event.policy ?? "")",
                        "startup": "\(event.startup)",
                    ]
                )
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
