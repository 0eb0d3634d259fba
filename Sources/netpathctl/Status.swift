// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathLinux

extension Netpathctl {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show interfaces (type, kind, metered and why) and each policy's path.",
            discussion:
                "The JSON form is {\"interfaces\": [...], \"kernel_routes\": [...], \"paths\": [...]} with snake_case keys, as docs/events.md describes."
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            let report: StatusReport
            if source.local {
                let configuration = try config.load().configuration
                let update = try await source.currentState(for: configuration)
                let paths = configuration.policies.map { PathEvaluator(policy: $0).path(for: update.state) }
                report = StatusReport(
                    interfaces: update.state.interfaces,
                    paths: paths,
                    kernelRoutes: update.state.kernelRoutes
                )
            } else {
                guard let status = try source.connect(config).request(.status).checked().status else {
                    throw AgentError(message: "the agent sent no status")
                }
                report = status
            }
            if json {
                print(String(decoding: try JSONCoding.prettyEncoder().encode(report), as: UTF8.self))
            } else {
                print(
                    StatusRenderer.render(
                        SystemState(interfaces: report.interfaces, kernelRoutes: report.kernelRoutes),
                        paths: report.paths
                    ),
                    terminator: ""
                )
            }
        }
    }
}
