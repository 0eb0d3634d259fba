// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch

extension Netpathctl {
    struct Hooks: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "List the files in the hooks directories (hooks_dir and every [[hook_dir]]): accepted, refused (and why) or ignored.",
            discussion: """
                A hook runs only if it is a regular executable file owned by root (or netpathd's own \
                user), not writable by group or others, not setuid/setgid, and every directory on \
                its path (from / to the hooks directory, and to a symlink's target) is owned by \
                root and not writable by group or others. Dotfiles, backups (~) and package-manager leftovers \
                (.dpkg-*, .rpm*) are ignored. With [[hook_dir]] tables, each directory is listed \
                under its path and dialect; a file hidden by the same name in an earlier directory \
                of its search path is "overridden", a symlink to /dev/null "masked". A directory \
                without files is listed as "missing" (no such directory) or "empty". A networkd \
                directory is listed with each of its state directories that holds files \
                (routable.d, off.d, …).
                """
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of a table.")
        var json = false

        func run() throws {
            let reports: [HookReport]
            let directory: String
            if source.local {
                let configuration = try config.load().configuration
                directory = configuration.agent.hooksDirectory
                var logger = Logger(label: "netpathctl")
                logger.logLevel = .critical
                reports = HookDispatcher.reports(
                    native: HookDirectory(path: directory, logger: logger),
                    dialectDirectories: configuration.hookDirectories.map {
                        DialectHookDirectory(setting: $0, logger: logger)
                    }
                )
            } else {
                guard let hooks = try source.connect(config).request(.hooks).checked().hooks else {
                    throw AgentError.incompleteReply(missing: "hook list")
                }
                reports = hooks
                directory = "netpathd's hooks directory"
            }
            if json {
                print(String(decoding: try JSONCoding.prettyEncoder().encode(reports), as: UTF8.self))
                return
            }
            // An agent older than directory reports sends none for an empty hooks_dir.
            if reports.isEmpty || (reports.count == 1 && reports[0].name.isEmpty) {
                let why = reports.first.map { " (\($0.status))" } ?? ""
                print("no hooks in \((reports.first?.directory ?? directory).escapingControlCharacters)\(why)")
                return
            }
            // One table per directory; a single directory (no [[hook_dir]]) prints as it always did.
            var groups: [(heading: String, reports: [HookReport])] = []
            for report in reports {
                let heading = "\(report.directory ?? directory) (\(report.dialect ?? "netpath"))"
                if groups.last?.heading == heading {
                    groups[groups.count - 1].reports.append(report)
                } else {
                    groups.append((heading, [report]))
                }
            }
            for (index, group) in groups.enumerated() {
                if groups.count > 1 { print((index == 0 ? "" : "\n") + group.heading.escapingControlCharacters + ":") }
                var rows = [["HOOK", "STATUS", "WHY"]]
                for report in group.reports {
                    // A directory without files: its status in place of a file's.
                    rows.append([report.name.isEmpty ? "-" : report.name, report.status, report.reason ?? ""])
                }
                print(TextTable.render(rows), terminator: "")
            }
        }
    }

    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask netpathd to reload its configuration (root only).",
            discussion:
                "An invalid configuration is rejected with its errors and the one in force stays. Same as `systemctl reload netpathd` or SIGHUP."
        )

        @Option(name: .long, help: ArgumentHelp("The agent's control socket.", valueName: "PATH"))
        var socket: String?

        func run() throws {
            let reply = try ControlClient(path: socket ?? SourceOptions.defaultSocketPath).request(.reload).checked()
            print("reloaded: \(reply.configuration ?? "configuration")")
        }
    }
}
