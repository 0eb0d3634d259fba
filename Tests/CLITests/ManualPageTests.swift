// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// The manual pages: netpathd(8) and netpathctl(8) generated into the package from the
/// commands' definitions, netpath.toml(5) and netpath-hooks(7) written by hand in docs/man.
@Suite(.serialSuite)
struct ManualPageTests {
    static let manualDirectory = DebianPackage.repository.appendingPathComponent("docs/man").path
    static let docs = DebianPackage.repository.appendingPathComponent("docs").path

    static func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    /// The backticked words in one column of each table of `markdown` whose header row starts
    /// with `header` (the key column of docs/configuration.md's tables, and so on), per table.
    /// `column` counts from 0; -1 is the last.
    static func column(_ column: Int, of markdown: String, header: String) -> [[String]] {
        var tables: [[String]] = []
        var inTable = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(header) {
                tables.append([])
                inTable = true
            } else if inTable, line.hasPrefix("|") {
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                let cell = cells[column >= 0 ? cells.startIndex + column : cells.endIndex + column]
                tables[tables.count - 1] += cell.matches(of: /`([^`]+)`/).map { String($0.1) }
            } else {
                inTable = false
            }
        }
        return tables
    }

    /// The page's `.Sh`/`.Ss` sections: title → the lines under it.
    static func sections(of page: String) -> [(title: String, lines: [Substring])] {
        var result: [(title: String, lines: [Substring])] = [("", [])]
        for line in page.split(separator: "\n") {
            if line.hasPrefix(".Sh ") || line.hasPrefix(".Ss ") {
                result.append((String(line.dropFirst(4)), []))
            } else {
                result[result.count - 1].lines.append(line)
            }
        }
        return result
    }

    // MARK: The pages written by hand, against the reference in docs/

    @Test("netpath.toml(5) describes every key of docs/configuration.md, in its table's section, with its default")
    func configurationPageHasEveryKey() throws {
        let markdown = try Self.text("\(Self.docs)/configuration.md")
        let page = try Self.text("\(Self.manualDirectory)/netpath.toml.5")
        let sections = Self.sections(of: page)
        // The key tables, each under the heading that names its TOML table (`## \`[agent]\``);
        // a heading without a key table ([plugin.NAME]) has none.
        var tables: [(table: String, keys: [String])] = []
        for chunk in markdown.components(separatedBy: "\n#").dropFirst() {
            let heading = chunk.prefix { $0 != "\n" }
            guard heading.contains("`["), let table = heading.split(separator: "`").dropFirst().first else { continue }
            let keys = Self.column(0, of: chunk, header: "| key | type | default |").joined()
            if !keys.isEmpty { tables.append((String(table), Array(keys))) }
        }
        #expect(
            tables.map(\.table) == [
                "[agent]", "[[hook_dir]]", "[[interface]]", "[[policy]]", "[[rule]]", "[connectivity]",
                "[plugin.event-log]", "[plugin.route-metrics]",
            ]
        )
        #expect(
            tables.flatMap(\.keys).count >= 30,
            "expected the 30-odd keys of docs/configuration.md, found \(tables)"
        )

        for (table, keys) in tables {
            let section = sections.first { $0.title.contains(table) }
            #expect(section != nil, "netpath.toml.5 has no section for \(table)")
            for key in keys {
                let item = section?.lines.first { $0.hasPrefix(".It Cm \(key) ") }
                #expect(item != nil, "netpath.toml.5 does not describe \(key) under \(table)")
                #expect(
                    item.map { $0.contains("default") || $0.contains("required") } ?? false,
                    "\(table) \(key): \(item ?? "")"
                )
            }
        }
    }

    @Test("netpath.toml(5) names every event of docs/events.md")
    func configurationPageHasEveryEvent() throws {
        let markdown = try Self.text("\(Self.docs)/events.md")
        // Both tables: interface events (`carrier-up` / `carrier-down` in one row) and path events.
        let events = Set(Self.column(0, of: markdown, header: "| event | fires when |").joined())
        let page = try Self.text("\(Self.manualDirectory)/netpath.toml.5")
        let described =
            Self.sections(of: page).first { $0.title == "EVENTS" }?.lines.filter { $0.hasPrefix(".It Cm ") } ?? []

        #expect(events.count == 12, "\(events.sorted())")
        for event in events {
            #expect(
                described.contains { $0.contains("Cm \(event)") },
                "netpath.toml.5's EVENTS does not describe \(event)"
            )
        }
    }

    @Test("netpath-hooks(7) names every variable and every refusal code of docs/hooks.md")
    func hooksPageHasTheWholeContract() throws {
        let markdown = try Self.text("\(Self.docs)/hooks.md")
        let page = try Self.text("\(Self.manualDirectory)/netpath-hooks.7")
        let variables = Set(Self.column(0, of: markdown, header: "| variable |").joined())
        let refusals = Set(Self.column(-1, of: markdown, header: "| rule | refusal code |").joined())

        // The native contract's 22, the NetworkManager dialect's 14 and networkd-dispatcher's 9.
        #expect(variables.count == 45, "\(variables.sorted())")
        for variable in variables {
            #expect(
                page.contains("Ev \(variable)\n") || page.contains("Ev \(variable) "),
                "netpath-hooks.7 lacks \(variable)"
            )
        }
        #expect(refusals.count == 9, "\(refusals.sorted())")
        for code in refusals {
            #expect(page.contains("Cm \(code)"), "netpath-hooks.7 lacks the refusal code \(code)")
        }
        for topic in ["Arguments", "Environment", "Standard input", "Timeouts and results"] {
            #expect(page.contains(".Ss \(topic)\n"), "netpath-hooks.7 has no section \(topic)")
        }
    }

    @Test("netpath.toml(5)'s example configuration passes check-config")
    func configurationPageExampleIsValid() throws {
        let page = try Self.text("\(Self.manualDirectory)/netpath.toml.5")
        let examples = try #require(page.range(of: ".Sh EXAMPLES\n"))
        let start = try #require(
            page.range(of: ".Bd -literal -offset indent\n", range: examples.upperBound..<page.endIndex)
        )
        let end = try #require(page.range(of: "\n.Ed\n", range: start.upperBound..<page.endIndex))
        let toml = page[start.upperBound..<end.lowerBound].replacingOccurrences(of: "\\e", with: "\\") + "\n"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-man-\(UUID().uuidString).toml")
        try toml.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path])

        #expect(result.status == 0, "\(toml)\n\(result.stderr)")
        #expect(result.stderr == "", "the example warns:\n\(result.stderr)")
    }

    // MARK: The pages in the package

    /// `mandoc -T lint` on each page in the package, as installed (gzip'd): nothing at all, but
    /// for cross-references mandoc looks up in this machine's manual database. Ours are to one
    /// another, and the next test checks those exist; others (execve(2)) depend on which
    /// manuals this machine has installed.
    @Test(
        "mandoc -T lint finds nothing in any page of the package",
        .enabled(if: DebianPackage.testsEnabled, "needs make test-deps' mandoc")
    )
    func pagesAreLintClean() async throws {
        let package = try await DebianPackage.current()
        let pages = try self.pages(in: package)
        #expect(pages.keys.sorted() == ["netpath-hooks.7", "netpath.toml.5", "netpathctl.8", "netpathd.8"])

        for (name, path) in pages {
            let result = try Command.run(["sh", "-c", "gzip -dc \"$0\" | mandoc -T lint -W style", path])
            let complaints = (result.stdout + result.stderr).split(separator: "\n").filter {
                !$0.contains("STYLE: referenced manual not found: Xr ") && !$0.hasPrefix("mandoc: outdated mandoc.db")
            }
            #expect(complaints.isEmpty, "\(name):\n\(complaints.joined(separator: "\n"))")
            // A page that cannot be parsed at all does not lint clean by saying nothing.
            let rendered = try Command.check(["sh", "-c", "gzip -dc \"$0\" | mandoc -T utf8 | col -b", path])
            #expect(rendered.contains("NAME\n"), "\(name) renders as:\n\(rendered)")
        }
    }

    @Test(
        "every netpath page a page refers to is in the package",
        .enabled(if: DebianPackage.testsEnabled, "needs make test-deps' tools")
    )
    func crossReferencesResolve() async throws {
        let package = try await DebianPackage.current()
        let pages = try self.pages(in: package)

        for (name, path) in pages {
            let source = try Command.check(["gzip", "-dc", path])
            for reference in source.matches(of: /\.Xr (netpath[^ \n]*) ([0-9])/) {
                #expect(
                    pages["\(reference.1).\(reference.2)"] != nil,
                    "\(name) refers to \(reference.1)(\(reference.2))"
                )
            }
        }
        for name in ["netpathd.8", "netpathctl.8"] {
            let source = try Command.check(["gzip", "-dc", try #require(pages[name])])
            #expect(source.contains(".Sh SEE ALSO\n.Xr netpath.toml 5 ,\n.Xr netpath-hooks 7 ,\n"), "\(name)")
        }
    }

    @Test(
        "netpathd(8) and netpathctl(8) list every option --help lists, under each subcommand",
        .enabled(if: DebianPackage.testsEnabled, "needs make test-deps' tools")
    )
    func generatedPagesListEveryOption() async throws {
        let package = try await DebianPackage.current()
        let pages = try self.pages(in: package)
        let netpathd = "\(package.contents)/usr/sbin/netpathd"
        let netpathctl = "\(package.contents)/usr/bin/netpathctl"

        // netpathd: no subcommands.
        let daemonPage = try Command.check(["gzip", "-dc", try #require(pages["netpathd.8"])])
        let daemonOptions = try Self.options(inHelpOf: [netpathd])
        #expect(daemonOptions.contains("--log-level"))
        #expect(Self.blocks(of: daemonPage).keys.sorted() == [""], "netpathd(8) lists subcommands netpathd has not")
        #expect(Self.options(inPageBlock: Self.blocks(of: daemonPage)[""] ?? "") == daemonOptions)

        // netpathctl: the root, and every subcommand --help names, each with its own options.
        let toolPage = try Command.check(["gzip", "-dc", try #require(pages["netpathctl.8"])])
        let blocks = Self.blocks(of: toolPage)
        let help = try Command.check([netpathctl, "--help"])
        let subcommands = help.components(separatedBy: "SUBCOMMANDS:\n").last!.split(separator: "\n")
            .compactMap { $0.firstMatch(of: /^  ([a-z][a-z-]*)\s/).map { String($0.1) } }
        #expect(subcommands.count == 9, "\(help)")
        #expect(Set(blocks.keys) == Set(subcommands + [""]), "netpathctl(8) has \(blocks.keys.sorted())")
        #expect(Self.options(inPageBlock: blocks[""] ?? "") == (try Self.options(inHelpOf: [netpathctl])))
        for subcommand in subcommands {
            let listed = try Self.options(inHelpOf: [netpathctl, subcommand])
            #expect(!listed.isEmpty)
            #expect(Self.options(inPageBlock: blocks[subcommand] ?? "") == listed, "netpathctl \(subcommand)")
        }
    }

    /// The installed manual pages of the package, by file name without .gz.
    private func pages(in package: DebianPackage.Built) throws -> [String: String] {
        var pages: [String: String] = [:]
        let man = "\(package.contents)/usr/share/man"
        for section in try FileManager.default.contentsOfDirectory(atPath: man) {
            for file in try FileManager.default.contentsOfDirectory(atPath: "\(man)/\(section)") {
                pages[String(file.dropLast(".gz".count))] = "\(man)/\(section)/\(file)"
            }
        }
        return pages
    }

    /// The options `COMMAND --help` lists (`--name` and `-x`).
    static func options(inHelpOf command: [String]) throws -> Set<String> {
        let help = try Command.check(command + ["--help"])
        let options = help.components(separatedBy: "\nOPTIONS:\n").last!.components(separatedBy: "\n\n")[0]
        var result = Set<String>()
        for line in options.split(separator: "\n") {
            guard let names = line.firstMatch(of: /^  (-[a-z0-9], )?(--[a-z0-9][a-z0-9-]*)/) else { continue }
            result.insert(String(names.2))
            if let short = names.1 { result.insert(String(short.dropLast(2))) }
        }
        return result
    }

    /// The options a block of a generated page describes (`.It Fl -name`, `.It Fl h , -help`).
    static func options(inPageBlock block: String) -> Set<String> {
        var result = Set<String>()
        // `.It Fl -config Ar FILE`, `.It Fl h , -help`: the names after Fl, up to the next macro.
        for line in block.split(separator: "\n") where line.hasPrefix(".It Fl ") {
            for token in line.split(separator: " ").dropFirst(2) where token != "," {
                if token.first?.isUppercase == true { break }
                result.insert("-" + token)
            }
        }
        return result
    }

    /// A generated page's option list split at each subcommand's `.It Em NAME`; "" is the root's.
    static func blocks(of page: String) -> [String: String] {
        var blocks: [String: String] = ["": ""]
        var current = ""
        for line in page.split(separator: "\n") {
            if line.hasPrefix(".It Em ") {
                current = String(line.dropFirst(".It Em ".count))
                blocks[current] = ""
            } else {
                blocks[current, default: ""] += line + "\n"
            }
        }
        return blocks
    }
}
