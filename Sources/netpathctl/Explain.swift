// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import NetPathConfig
import NetPathControl
import NetPathCore

extension Netpathctl {
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain each policy's choice and each rule's verdict for the current state.",
            discussion: """
                For every policy: the primary interface, then every other interface and why it lost \
                (wrong type, prohibited, metered, no carrier, no address, no default route, no route \
                to the target, lower preference, higher metric). For every rule: which of the current \
                state's events (those dispatched at startup) it would match, and why not the others.
                """
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of text.")
        var json = false

        func run() async throws {
            if source.local {
                let configuration = try config.load().configuration
                let (update, ignored) = try await source.currentReading(for: configuration)
                let explanation = Explanation(
                    state: update.state,
                    configuration: configuration,
                    time: update.time,
                    ignored: ignored
                )
                try output(text: explanation.text, report: explanation.report)
            } else {
                guard let reply = try source.connect(config).request(.explain).checked().explain else {
                    throw AgentError.incompleteReply(missing: "explanation")
                }
                try output(text: reply.text, report: reply.report)
            }
        }

        private func output(text: String, report: Explanation.Report) throws {
            if json {
                print(String(decoding: try JSONCoding.prettyEncoder().encode(report), as: UTF8.self))
            } else {
                print(text, terminator: "")
            }
        }
    }
}
