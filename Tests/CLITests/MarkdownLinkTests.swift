// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// The repository's Markdown points only at what the repository holds: every relative link, and
/// every Markdown file named in code, resolves to a file inside it (and a link's `#anchor` to a
/// heading there).
struct MarkdownLinkTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL

    @Test("every link and Markdown path in the repository's .md files resolves inside the repository")
    func repositoryLinksResolve() throws {
        let checker = MarkdownLinks(repository: Self.repository)
        let files = try checker.markdownFiles()
        let names = Set(files.map(\.lastPathComponent))
        // The walk found the files that matter, so an empty problem list means something.
        #expect(files.contains(Self.repository.appendingPathComponent("README.md")))
        #expect(names.isSuperset(of: ["configuration.md", "events.md", "hooks.md", "plugins.md"]), "\(files)")
        var problems: [String] = []
        var references = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            references += MarkdownLinks.references(in: text).count
            problems += checker.problems(in: file, text: text)
        }
        #expect(references >= 50, "expected the docs' links to be found; found \(references)")
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("a link outside the repository, a missing file, a missing heading and a path in code are reported")
    func brokenReferencesAreReported() throws {
        let root = try ScratchDirectory.make("md-links")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("docs"),
            withIntermediateDirectories: true
        )
        try "# Hooks\n\n## What a hook gets\n".write(
            to: root.appendingPathComponent("docs/hooks.md"),
            atomically: true,
            encoding: .utf8
        )
        let readme = root.appendingPathComponent("README.md")
        let text = """
            # netpath

            The contract is in `../shared/design.md`; see also `docs/hooks.md` and [hooks](docs/hooks.md).
            [What a hook gets](docs/hooks.md#what-a-hook-gets), [home](https://example.com/x.md), [top](#netpath).
            [outside](../shared/design.md) and [gone](docs/events.md) and [anchor](docs/hooks.md#environment)
            ```
            [in a fence](nowhere.md) `../not/checked.md`
            ```
            [ref]: /docs/missing.md
            """
        try text.write(to: readme, atomically: true, encoding: .utf8)

        let problems = MarkdownLinks(repository: root).problems(in: readme, text: text)
        #expect(
            problems == [
                "README.md:3: `../shared/design.md` names no Markdown file in the repository",
                "README.md:5: ../shared/design.md points outside the repository",
                "README.md:5: docs/events.md: docs/events.md does not exist",
                "README.md:5: docs/hooks.md#environment: docs/hooks.md has no heading #environment",
                "README.md:9: /docs/missing.md: docs/missing.md does not exist",
            ]
        )
    }

    @Test("anchors follow GitHub: lower case, punctuation dropped, spaces as dashes, repeats numbered")
    func anchorsFollowGitHub() {
        let anchors = MarkdownLinks.anchors(
            in: """
                ## `[[rule]]`: which events go where
                ## Order, and events made obsolete
                ### Event
                ### Event
                ```
                # not a heading
                ```
                """
        )
        #expect(anchors == ["rule-which-events-go-where", "order-and-events-made-obsolete", "event", "event-1"])
    }
}
