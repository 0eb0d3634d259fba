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
                "The JSON form is {\"interfaces\": [...], \"kernel_routes\": [...], \"paths\": [...], \"ignored_count\": N} with snake_case keys, as docs/events.md describes; with --all it also has \"ignored\": [...]."
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of a table.")
        var json = false

        @Flag(name: .long, help: "Also list the links [agent] ignore keeps out, and why (in JSON too).")
        var all = false

        func run() async throws {
            let report: StatusReport
            if source.local {
                let configuration = try config.load().configuration
                let (update, ignored) = try await source.currentReading(for: configuration)
                let paths = configuration.policies.map { PathEvaluator(policy: $0).path(for: update.state) }
                report = StatusReport(
                    interfaces: update.state.interfaces,
                    paths: paths,
                    kernelRoutes: update.state.kernelRoutes,
                    ignoredCount: ignored.count,
                    ignored: all ? ignored : nil
                )
            } else {
                guard let status = try source.connect(config).request(.status, all: all).checked().status else {
                    throw AgentError.incompleteReply(missing: "status")
                }
                report = status
            }
            if json {
                print(String(decoding: try JSONCoding.prettyEncoder().encode(report), as: UTF8.self))
            } else {
                print(
                    StatusRenderer.render(
                        SystemState(interfaces: report.interfaces, kernelRoutes: report.kernelRoutes),
                        paths: report.paths,
                        ignoredCount: report.ignoredCount,
                        ignored: all ? report.ignored ?? [] : nil
                    ),
                    terminator: ""
                )
            }
        }
    }
}
