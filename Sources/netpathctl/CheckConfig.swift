// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import NetPathConfig
import NetPathControl
import NetPathCore

extension Netpathctl {
    struct CheckConfig: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-config",
            abstract: "Validate a configuration file without applying it.",
            discussion: """
                Exit status 0 and a one-line summary when the file is valid; 1 and one \
                FILE:LINE:COL: error: … line per problem (all of them, not just the first) when not. \
                Without FILE, checks \(ConfigurationFile.defaultPath) if it exists, else the embedded default.
                """
        )

        @Argument(help: ArgumentHelp("The configuration file to check.", valueName: "FILE"))
        var file: String?

        func run() throws {
            let loaded = try ConfigOptions(file: file).load()
            let c = loaded.configuration
            func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
            var summary = "\(loaded.source): valid: \(count(c.policies.count, "policy", "policies"))"
            summary +=
                c.isDispatcherMode ? ", no rules (dispatcher mode)" : ", \(count(c.rules.count, "rule", "rules"))"
            summary +=
                ", \(count(c.interfaces.count, "interface override", "interface overrides")), hooks in \(c.agent.hooksDirectory)"
            for setting in c.hookDirectories {
                summary += " and \(setting.paths.joined(separator: ":")) (\(setting.dialect))"
            }
            if let probing = c.connectivity {
                let method: String
                switch probing.method {
                case .http: method = "http"
                case .icmp: method = "icmp"
                }
                summary += ", connectivity probed by \(method) every \(probing.interval.configurationText)"
            }
            if !c.warnings.isEmpty { summary += ", \(count(c.warnings.count, "warning", "warnings"))" }
            print(summary)
        }
    }
}

extension ConfigOptions {
    init(file: String?) {
        self.init()
        config = file
    }
}
