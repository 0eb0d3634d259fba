// A Swift program that embeds the netpath agent and adds its own in-process plugin.
//
//     swift run netpath-embedded-example --config my.toml
//
// with, in my.toml:
//
//     [plugin.primary-announcer]
//     prefix = "path:"
//
//     [[rule]]
//     name = "announce"
//     on = ["satisfied", "unsatisfied", "changed"]
//     plugins = ["primary-announcer"]
//
// The agent does everything netpathd does (hooks, control socket, reload on SIGHUP); the plugin
// is one more handler, typed, in-process, isolated like a hook.
import Foundation
import Logging
import NetPath
import NetPathAgent
import ServiceLifecycle
import UnixSignals

/// Prints one line whenever a policy's path changes: the kind of handler an app embeds.
struct PrimaryAnnouncer: Plugin {
    static let name = "primary-announcer"

    let prefix: String

    init(configuration: PluginConfiguration) throws {
        var settings = configuration
        prefix = settings.string("prefix") ?? "path:"
        try settings.finish()
    }

    func handle(_ event: Event, context: PluginContext) async throws {
        guard event.scope == .path, let path = event.path else { return }
        let via = path.primary.map { " via \($0.name) (\($0.type))" } ?? ""
        let line = "\(prefix) \(path.policy) \(path.status.rawValue)\(via)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}

let arguments = CommandLine.arguments
let configPath = arguments.firstIndex(of: "--config").flatMap {
    arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
}
let socketPath = arguments.firstIndex(of: "--control-socket").flatMap {
    arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
}

LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
let logger = Logger(label: "embedded")

var plugins = PluginRegistry()
plugins.register(PrimaryAnnouncer.self)

let agent: Agent
do {
    agent = try Agent(
        options: AgentOptions(
            configPath: configPath,
            environment: ProcessInfo.processInfo.environment,
            controlSocketPath: socketPath,
            logger: logger
        ),
        plugins: plugins
    )
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

let reloads = Task {
    for await _ in await UnixSignalsSequence(trapping: .sighup) { agent.reload() }
}
let group = ServiceGroup(
    configuration: .init(
        services: [.init(service: agent)],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
)
try await group.run()
reloads.cancel()
